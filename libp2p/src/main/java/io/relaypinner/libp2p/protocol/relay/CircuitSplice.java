package io.relaypinner.libp2p.protocol.relay;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.relaypinner.common.Failures;
import io.relaypinner.libp2p.mux.yamux.YamuxStreamChannel;
import io.relaypinner.libp2p.netty.HalfClose;
import io.relaypinner.libp2p.mux.yamux.YamuxStreamTermination;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One relayed circuit: the source's hop stream and the destination's stop stream joined so that
 * the bytes of each go to the other as they are (the relayed connection's own Noise and yamux run
 * end to end; the relay never decrypts or copies them: the received {@link ByteBuf}s are written
 * to the other stream).
 *
 * <p>Backpressure: a side stops reading while the other side's stream is not writable (its yamux
 * send window or write buffer is full) and resumes when it drains, so a circuit holds at most
 * about one stream write buffer per direction. A FIN from one end becomes a FIN to the other;
 * a reset or a lost connection resets the other end. The data limit counts each direction
 * separately (libp2p/specs relay/circuit-v2.md, {@code Limit.data}); the bytes up to the limit
 * pass, then both streams are reset. The duration limit resets both when it elapses.
 */
final class CircuitSplice {
  private static final Logger LOG = LoggerFactory.getLogger(CircuitSplice.class);

  private final CircuitRelayEngine engine;
  private final CircuitRelayEngine.Circuit circuit;
  private final AtomicBoolean ended = new AtomicBoolean();
  private final End source;
  private final End destination;
  private volatile ScheduledFuture<?> durationTimer;

  CircuitSplice(final CircuitRelayEngine engine, final CircuitRelayEngine.Circuit circuit,
      final Channel sourceStream, final Channel destinationStream) {
    this.engine = engine;
    this.circuit = circuit;
    this.source = new End(sourceStream, "source");
    this.destination = new End(destinationStream, "destination");
    source.other = destination;
    destination.other = source;
  }

  End sourceEnd() {
    return source;
  }

  End destinationEnd() {
    return destination;
  }

  /** Arms the duration limit; call once both ends are in place or about to be. */
  void start() {
    if (!circuit.durationLimit().isZero()) {
      durationTimer = source.channel.eventLoop().schedule(() -> end(CircuitEnd.DURATION_LIMIT),
          circuit.durationLimit().toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  /** Ends the circuit once: counted; for anything but a clean close both streams are reset. */
  void end(final CircuitEnd how) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    final ScheduledFuture<?> timer = durationTimer;
    if (timer != null) {
      timer.cancel(false);
    }
    engine.circuitEnded(circuit, how);
    LOG.debug("circuit {} {} -> {} ended: {} ({} bytes to the destination, {} back)",
        circuit.id(), circuit.source(), circuit.destination(), how.label(), source.count,
        destination.count);
    if (how == CircuitEnd.CLOSED) {
      // A clean close of one end: the other finishes its writes, sends FIN and closes itself
      // once its own remote's FIN is there.
      source.finishOutput();
      destination.finishOutput();
    } else {
      source.reset();
      destination.reset();
    }
  }

  /** One end of the circuit: the handler on its stream, forwarding what it reads to the other. */
  final class End extends ChannelInboundHandlerAdapter {
    private final Channel channel;
    private final String role;
    private End other;
    /** Bytes read from this end (written to the other); touched on this end's loop. */
    private long count;

    private End(final Channel channel, final String role) {
      this.channel = channel;
      this.role = role;
    }

    private final ChannelFutureListener writeListener = this::written;

    private void written(final io.netty.channel.ChannelFuture f) {
      if (!f.isSuccess()) {
        LOG.debug("circuit {}: write to the {} failed: {}", circuit.id(), role,
            f.cause().toString());
        end(CircuitEnd.WRITE_FAILED);
      }
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      if (!(msg instanceof ByteBuf buf)) {
        ReferenceCountUtil.release(msg);
        return;
      }
      forward(buf);
    }

    /** Sends {@code buf} (owned here) to the other end, within the data limit. */
    void forward(final ByteBuf buf) {
      if (ended.get()) {
        buf.release();
        return;
      }
      final int size = buf.readableBytes();
      final long limit = circuit.dataLimit();
      if (limit > 0 && count + size > limit) {
        final int allowed = (int) (limit - count);
        count += allowed;
        engine.countBytes(allowed);
        if (allowed > 0) {
          other.channel.writeAndFlush(buf.retainedSlice(buf.readerIndex(), allowed));
        }
        buf.release();
        end(CircuitEnd.DATA_LIMIT);
        return;
      }
      count += size;
      engine.countBytes(size);
      other.channel.writeAndFlush(buf).addListener(other.writeListener);
      if (!other.channel.isWritable()) {
        channel.config().setAutoRead(false);
        // Writability may have come back between the check and the pause: look again.
        if (other.channel.isWritable()) {
          channel.config().setAutoRead(true);
        }
      }
    }

    @Override
    public void channelWritabilityChanged(final ChannelHandlerContext ctx) {
      if (channel.isWritable() && !ended.get()) {
        other.channel.config().setAutoRead(true);
      }
      ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt)
        throws Exception {
      if (evt == ChannelInputShutdownEvent.INSTANCE) {
        // This end sent FIN: the other end gets FIN after what was forwarded before it.
        other.finishOutput();
        return;
      }
      super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      if (Failures.isFatal(cause)) {
        LOG.error("circuit {}: {} stream failed", circuit.id(), role, cause);
      } else {
        LOG.debug("circuit {}: {} stream failed: {}", circuit.id(), role, cause.toString());
      }
      end(CircuitEnd.RESET);
    }

    @Override
    public void channelInactive(final ChannelHandlerContext ctx) {
      final YamuxStreamTermination termination = channel instanceof YamuxStreamChannel stream
          ? stream.termination().orElse(YamuxStreamTermination.CLOSED)
          : YamuxStreamTermination.CLOSED;
      if (!ended.get()) {
        LOG.debug("circuit {}: the {} stream ended first ({})", circuit.id(), role,
            termination);
      }
      end(termination == YamuxStreamTermination.CLOSED ? CircuitEnd.CLOSED : CircuitEnd.RESET);
      ctx.fireChannelInactive();
    }

    /** The stream went away before the splice could be installed on it. */
    void peerGone() {
      end(CircuitEnd.RESET);
    }

    private void finishOutput() {
      if (!channel.isActive()) {
        return;
      }
      if (channel instanceof DuplexChannel duplex) {
        if (!duplex.isOutputShutdown()) {
          HalfClose.shutdownOutput(channel);
        }
      } else {
        channel.close();
      }
    }

    private void reset() {
      if (channel instanceof YamuxStreamChannel stream) {
        stream.reset();
      } else {
        channel.close();
      }
    }
  }
}
