package io.relaypinner.libp2p.protocol.ping;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;

/**
 * A stand-in for a negotiated yamux stream in tests: an {@link EmbeddedChannel} with half-close
 * ({@link DuplexChannel}), plus {@link #link} to wire two of them back to back.
 *
 * <p>Each stream has its own counting allocator, used by the handlers ({@code ctx.alloc()}) and by
 * {@link #receive}, so {@link #finishAndCountUnreleased()} finds any buffer left unreleased
 * without waiting for the garbage collector.
 */
public final class TestStream extends EmbeddedChannel implements DuplexChannel {
  private final UnpooledByteBufAllocator allocator = new UnpooledByteBufAllocator(false);
  private boolean active;
  private boolean outputShutdown;
  private boolean inputShutdown;

  /** An active stream, as a negotiated stream is when protocol handlers are installed. */
  public TestStream() {
    this(true);
  }

  /** With {@code active} false, the stream reports inactive until {@link #activate()}. */
  public TestStream(final boolean active) {
    super();
    this.active = active;
    config().setAllocator(allocator);
  }

  /** Becomes active and fires {@code channelActive}. */
  public void activate() {
    active = true;
    pipeline().fireChannelActive();
    runPendingTasks();
  }

  @Override
  public boolean isActive() {
    return active && super.isActive();
  }

  /**
   * Closes the stream, releases what is left in its queues, and returns how many bytes of the
   * buffers allocated through it are still unreleased (0 when nothing leaked).
   */
  public long finishAndCountUnreleased() {
    finishAndReleaseAll();
    return allocator.metric().usedHeapMemory() + allocator.metric().usedDirectMemory();
  }

  /** Delivers the remote's FIN as a half-closed yamux stream does. */
  public void receiveFin() {
    inputShutdown = true;
    pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
    runPendingTasks();
  }

  /** Writes bytes as if they arrived from the remote. */
  public void receive(final byte[] bytes) {
    writeInbound(allocator.buffer(bytes.length).writeBytes(bytes));
  }

  /** Everything written so far, concatenated (and released). */
  public byte[] drainOutbound() {
    final ByteBuf all = Unpooled.buffer();
    try {
      Object msg;
      while ((msg = readOutbound()) != null) {
        try {
          all.writeBytes((ByteBuf) msg);
        } finally {
          ReferenceCountUtil.release(msg);
        }
      }
      final byte[] out = new byte[all.readableBytes()];
      all.readBytes(out);
      return out;
    } finally {
      all.release();
    }
  }

  /** Whether our side has sent its FIN (half-close or full close). */
  public boolean finSent() {
    return outputShutdown || !isOpen();
  }

  @Override
  public boolean isInputShutdown() {
    return inputShutdown;
  }

  @Override
  public ChannelFuture shutdownInput() {
    return shutdownInput(newPromise());
  }

  @Override
  public ChannelFuture shutdownInput(final ChannelPromise promise) {
    inputShutdown = true;
    return promise.setSuccess();
  }

  @Override
  public boolean isOutputShutdown() {
    return outputShutdown;
  }

  @Override
  public ChannelFuture shutdownOutput() {
    return shutdownOutput(newPromise());
  }

  @Override
  public ChannelFuture shutdownOutput(final ChannelPromise promise) {
    outputShutdown = true;
    return promise.setSuccess();
  }

  @Override
  public boolean isShutdown() {
    return inputShutdown && outputShutdown;
  }

  @Override
  public ChannelFuture shutdown() {
    return shutdown(newPromise());
  }

  @Override
  public ChannelFuture shutdown(final ChannelPromise promise) {
    inputShutdown = true;
    outputShutdown = true;
    return promise.setSuccess();
  }

  /** Two streams wired back to back; {@link #pump()} moves bytes and FINs until quiet. */
  public static Link link(final TestStream a, final TestStream b) {
    return new Link(a, b);
  }

  /** See {@link #link}. */
  public static final class Link {
    private final TestStream a;
    private final TestStream b;
    private boolean finToB;
    private boolean finToA;

    private Link(final TestStream a, final TestStream b) {
      this.a = a;
      this.b = b;
    }

    /** Moves every pending write to the other side, and each side's FIN once, until quiet. */
    public void pump() {
      boolean progress = true;
      while (progress) {
        progress = move(a, b);
        progress |= move(b, a);
        if (!finToB && a.finSent() && b.isOpen()) {
          finToB = true;
          b.receiveFin();
          progress = true;
        }
        if (!finToA && b.finSent() && a.isOpen()) {
          finToA = true;
          a.receiveFin();
          progress = true;
        }
      }
    }

    private static boolean move(final TestStream from, final TestStream to) {
      boolean moved = false;
      Object msg;
      while ((msg = from.readOutbound()) != null) {
        moved = true;
        if (to.isOpen()) {
          to.writeInbound(msg);
        } else {
          ReferenceCountUtil.release(msg);
        }
      }
      return moved;
    }
  }
}
