package io.relaypinner.orbitdb.heads;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.common.Failures;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.PeerBanEngine;
import io.relaypinner.libp2p.netty.ActivatedHandler;
import io.relaypinner.multiformats.PeerId;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One heads-exchange stream ({@code /orbitdb/heads/<address>}, OrbitDB {@code src/sync.js}), the
 * same for dialer and listener: each side sends every head as raw entry-block bytes, one per
 * frame, with no length prefix, then half-closes; each side reads until the peer's FIN.
 *
 * <p>Receiving: bytes are accumulated and split into back-to-back CBOR items, so heads that
 * arrive merged into one frame or split over several are both read right. Each item goes to
 * {@link HeadsEndpoint#onHead}. Sending: js-libp2p 3 merges the frames that arrive before
 * OrbitDB attached its reader into one chunk, and OrbitDB then fails to decode two heads as one
 * entry (notes/orbitdb-wire.md §3.26 pitfall 1). One frame cannot be merged with anything, so
 * the first head goes at once, and when it is the only one (the usual case: a linear log) the
 * half-close follows at once too: a fresh reader gets the relay's heads without any wait. Further
 * heads go only after the peer's first bytes or its FIN arrived (its reader is attached), or
 * after {@link HeadsConfig#sendDelay()} without either.
 *
 * <p>Limits: an item larger than {@link HeadsConfig#maxEntrySize()}, more than
 * {@link HeadsConfig#maxHeadsPerStream()} items, bytes that cannot start a CBOR item, or a
 * stream open longer than {@link HeadsConfig#timeout()} close this stream only; the counter
 * callback is told why.
 */
final class HeadsExchangeHandler extends ActivatedHandler {
  private static final Logger LOG = LoggerFactory.getLogger(HeadsExchangeHandler.class);

  private final HeadsEndpoint endpoint;
  private final PeerId peer;
  private final HeadsConfig config;
  private final Consumer<String> counter;
  private final CompletableFuture<HeadsExchangeResult> result = new CompletableFuture<>();
  /** Closes the stream when it is open longer than {@link HeadsConfig#timeout()}. */
  private final Deadline timeout = deadline(() -> fail("timeout", null));
  /** Lets the rest of our heads go when the peer's reader gave no sign of life meanwhile. */
  private final Deadline sendDelay = deadline(this::sendHeads);
  private byte[] buffer = new byte[0];
  private int buffered;
  private int lastIncompleteScan;
  private int received;
  private int sent;
  /** The peer's reader is attached (its bytes or FIN arrived), or the send delay passed. */
  private boolean released;
  /** Our heads are loaded; {@link #rest} holds those not written yet. */
  private boolean loaded;
  private List<byte[]> rest = List.of();
  private boolean sending;
  private boolean outputDone;
  private boolean inputDone;
  private boolean closed;

  HeadsExchangeHandler(final HeadsEndpoint endpoint, final PeerId peer, final HeadsConfig config,
      final Consumer<String> counter) {
    this.endpoint = endpoint;
    this.peer = peer;
    this.config = config;
    this.counter = counter;
  }

  /** Completes when the stream is done, successfully or not. */
  CompletableFuture<HeadsExchangeResult> result() {
    return result;
  }

  @Override
  protected void onActivated(final ChannelHandlerContext ctx) {
    counter.accept("streams");
    timeout.expireIn(config.timeout().toNanos());
    sendDelay.expireIn(config.sendDelay().toNanos());
    endpoint.heads().whenComplete((heads, error) -> ctx.executor().execute(() -> {
      if (closed) {
        return;
      }
      if (error != null && Failures.isFatal(error)) {
        // A JVM error or our bug is no answer: close without claiming we have no heads.
        fail("error", error);
        return;
      }
      if (error != null) {
        LOG.warn("heads: could not read our heads", error);
      }
      final List<byte[]> all = error != null || heads == null ? List.of() : heads;
      loaded = true;
      if (all.size() == 1) {
        // One frame cannot be merged with another: send it and half-close now.
        released = true;
      } else if (!all.isEmpty() && !released) {
        write(all.get(0));
        rest = all.subList(1, all.size());
        return;
      }
      rest = all;
      if (released) {
        flush();
      }
    }));
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ReferenceCountUtil.release(msg);
      fail("malformed", new ProtocolViolationException("heads: unexpected message " + msg));
      return;
    }
    try {
      if (closed) {
        return;
      }
      append(in);
    } finally {
      in.release();
    }
    if (closed) {
      return;
    }
    // Any byte proves the peer's reader is attached: our heads may go now.
    sendHeads();
    // Rescan an incomplete item only after it grew by a quarter: linear work for split items.
    if (lastIncompleteScan == 0 || buffered >= lastIncompleteScan + lastIncompleteScan / 4
        || buffered > config.maxEntrySize()) {
      drain(false);
    }
  }

  private void append(final ByteBuf in) {
    // At most one incomplete item (<= maxEntrySize, checked by drain) plus one frame (bounded by
    // the yamux receive window) is ever buffered.
    final int n = in.readableBytes();
    if (buffer.length < buffered + n) {
      buffer = Arrays.copyOf(buffer, Math.max(buffered + n, buffer.length * 2));
    }
    in.readBytes(buffer, buffered, n);
    buffered += n;
  }

  /** Hands out every complete item; at FIN, leftovers are an error. */
  private void drain(final boolean atEnd) {
    int offset = 0;
    try {
      while (offset < buffered && !closed) {
        final long length = CborItemScanner.itemLength(buffer, offset, buffered);
        if (length < 0) {
          if (buffered - offset > config.maxEntrySize()) {
            fail("oversized", new ProtocolViolationException("heads: entry larger than "
                + config.maxEntrySize() + " bytes"));
            return;
          }
          break;
        }
        if (length > config.maxEntrySize()) {
          fail("oversized", new ProtocolViolationException("heads: entry of " + length
              + " bytes exceeds " + config.maxEntrySize()));
          return;
        }
        final byte[] block = Arrays.copyOfRange(buffer, offset, offset + (int) length);
        offset += (int) length;
        if (++received > config.maxHeadsPerStream()) {
          fail("too-many-heads", new ProtocolViolationException("heads: more than "
              + config.maxHeadsPerStream() + " heads on one stream"));
          return;
        }
        counter.accept("heads-received");
        endpoint.onHead(block, peer);
      }
    } catch (final ProtocolViolationException e) {
      fail("malformed", e);
      return;
    }
    if (closed) {
      return;
    }
    if (offset > 0) {
      System.arraycopy(buffer, offset, buffer, 0, buffered - offset);
      buffered -= offset;
    }
    lastIncompleteScan = buffered;
    if (atEnd && buffered > 0) {
      fail("malformed", new ProtocolViolationException("heads: " + buffered
          + " bytes of an incomplete entry before FIN"));
    }
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt)
      throws Exception {
    if (evt == ChannelInputShutdownEvent.INSTANCE) {
      if (!closed) {
        inputDone = true;
        drain(true);
        sendHeads();
        maybeFinish();
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  /** The peer's reader is attached, or the send delay passed: the rest of our heads may go. */
  private void sendHeads() {
    if (closed) {
      return;
    }
    released = true;
    sendDelay.cancel();
    if (loaded) {
      flush();
    }
  }

  private ChannelFuture write(final byte[] head) {
    // One write per head: one yamux DATA frame each, never merged.
    final Channel channel = ctx().channel();
    sent++;
    counter.accept("heads-sent");
    return channel.writeAndFlush(channel.alloc().buffer(head.length).writeBytes(head));
  }

  /** Writes the heads not written yet, then half-closes; once. */
  private void flush() {
    if (sending || closed) {
      return;
    }
    sending = true;
    sendDelay.cancel();
    final Channel channel = ctx().channel();
    ChannelFuture last = null;
    for (final byte[] head : rest) {
      last = write(head);
    }
    rest = List.of();
    final Runnable fin = () -> {
      if (channel instanceof DuplexChannel duplex) {
        duplex.shutdownOutput().addListener(f -> {
          outputDone = true;
          maybeFinish();
        });
      } else {
        outputDone = true;
        maybeFinish();
      }
    };
    if (last == null) {
      fin.run();
    } else {
      last.addListener(f -> {
        if (!f.isSuccess()) {
          fail("write-failed", f.cause());
          return;
        }
        fin.run();
      });
    }
  }

  private void maybeFinish() {
    if (!closed && inputDone && outputDone) {
      closed = true;
      cancelTimers();
      result.complete(new HeadsExchangeResult(received, sent, null));
      ctx().close();
    }
  }

  private void fail(final String reason, final Throwable cause) {
    if (closed) {
      return;
    }
    closed = true;
    cancelTimers();
    counter.accept("closed-" + reason);
    if (cause instanceof ProtocolViolationException) {
      // Garbage, an entry over the size limit or too many heads: the remote's fault.
      Connection.reportFault(ctx().channel(), PeerBanEngine.Fault.MALFORMED_MESSAGE);
    }
    if (cause != null && Failures.isFatal(cause)) {
      LOG.error("heads stream {} with {} failed", ctx().channel(), peer, cause);
    } else {
      LOG.debug("heads stream {} with {} closed: {}{}", ctx().channel(), peer, reason,
          cause == null ? "" : " (" + cause.getMessage() + ")");
    }
    result.complete(new HeadsExchangeResult(received, sent, reason));
    buffer = new byte[0];
    buffered = 0;
    ctx().close();
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    fail("error", cause);
  }

  @Override
  protected void onInactive(final ChannelHandlerContext ctx) {
    if (!closed) {
      fail(inputDone ? "closed-early" : "reset", null);
    }
  }

  private void cancelTimers() {
    sendDelay.cancel();
    timeout.cancel();
  }
}
