package io.relaypinner.libp2p.netty;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A handler whose work starts once it is in the pipeline of an active channel, and the timers
 * that bound that work: the base of the stream and handshake handlers (ping, identify, the relay's
 * stop initiator, Noise, the OrbitDB heads exchange).
 *
 * <p><b>Activation.</b> Netty calls {@code channelActive} only on handlers that are in the
 * pipeline when the channel becomes active. A handler added to a channel that is active already
 * (every negotiated libp2p stream, a connection upgraded after its TCP handshake) never sees it,
 * and a handler added before (an {@code EmbeddedChannel}'s) sees both: {@code handlerAdded} with
 * the channel active, then {@code channelActive}. {@link #onActivated} covers both: it runs
 * exactly once, on the event loop, as soon as the handler is added and the channel active.
 * (jvm-libp2p's {@code ProtocolMessageHandler.onActivated} plays the same part.) Subclasses hook
 * the other lifecycle points through {@link #onAdded}, {@link #onInactive} and {@link
 * #onRemoved}; the Netty methods themselves are final so the rule cannot be skipped.
 *
 * <p><b>Deadlines.</b> A {@link Deadline} made by {@link #deadline} runs its task on the
 * channel's event loop, measured on the loop's {@link io.netty.util.concurrent.Ticker}, and is
 * cancelled when the channel goes inactive and when the handler is removed: a handler's timer
 * never outlives its stream.
 *
 * <p>Duplex so that a handler that also guards writes (the Noise handshake) can be one; the
 * outbound methods a subclass does not override are marked {@code @Skip} by Netty, so writes do
 * not pass through them.
 */
public abstract class ActivatedHandler extends ChannelDuplexHandler {
  private ChannelHandlerContext ctx;
  private boolean activated;
  /** The deadlines of this handler, linked through {@link Deadline#next} (no list per stream). */
  private Deadline deadlines;

  /** This handler's context; null until it is added. */
  protected final ChannelHandlerContext ctx() {
    return ctx;
  }

  /** Whether {@link #onActivated} ran. */
  protected final boolean isActivated() {
    return activated;
  }

  /**
   * A deadline of this handler that runs {@code onExpired} on the event loop when it expires;
   * make it in a field initializer or the constructor, arm it once the handler is added.
   */
  protected final Deadline deadline(final Runnable onExpired) {
    final Deadline deadline = new Deadline(this, onExpired);
    deadline.next = deadlines;
    deadlines = deadline;
    return deadline;
  }

  /** Called first when the handler is added (before {@link #onActivated}, if that follows). */
  protected void onAdded(final ChannelHandlerContext ctx) {}

  /** Called once, on the event loop, when the handler is added and the channel active. */
  protected void onActivated(final ChannelHandlerContext ctx) {}

  /** Called when the channel went inactive, after the deadlines were cancelled. */
  protected void onInactive(final ChannelHandlerContext ctx) {}

  /** Called when the handler is removed, after the deadlines were cancelled. */
  protected void onRemoved(final ChannelHandlerContext ctx) {}

  @Override
  public final void handlerAdded(final ChannelHandlerContext ctx) {
    this.ctx = ctx;
    onAdded(ctx);
    // A negotiated stream is already active, so channelActive will not come.
    if (ctx.channel().isActive()) {
      activate(ctx);
    }
  }

  @Override
  public final void channelActive(final ChannelHandlerContext ctx) {
    activate(ctx);
    ctx.fireChannelActive();
  }

  @Override
  public final void channelInactive(final ChannelHandlerContext ctx) {
    cancelDeadlines();
    onInactive(ctx);
    ctx.fireChannelInactive();
  }

  @Override
  public final void handlerRemoved(final ChannelHandlerContext ctx) {
    cancelDeadlines();
    onRemoved(ctx);
  }

  private void activate(final ChannelHandlerContext ctx) {
    if (activated) {
      return;
    }
    activated = true;
    onActivated(ctx);
  }

  private void cancelDeadlines() {
    for (Deadline deadline = deadlines; deadline != null; deadline = deadline.next) {
      deadline.cancel();
    }
  }

  /**
   * One timer of an {@link ActivatedHandler} on its channel's event loop: expires at a point of
   * the loop's ticker and then runs its task once, unless cancelled or moved first. Moving it
   * later costs no rescheduling: the timer already set re-arms itself for the rest when it fires,
   * so a handler may push it back on every read (an idle timeout) without a task per read; moving
   * it earlier reschedules. Confined to the event loop, like the handler.
   */
  public static final class Deadline {
    private final ActivatedHandler owner;
    private final Runnable onExpired;
    private final Runnable fire = this::fire;
    private Deadline next;
    private ScheduledFuture<?> timer;
    /** When the timer set now fires (ticker nanos); meaningful while {@link #timer} is set. */
    private long firesAt;
    private long expiresAt;
    private boolean armed;

    private Deadline(final ActivatedHandler owner, final Runnable onExpired) {
      this.owner = owner;
      this.onExpired = Objects.requireNonNull(onExpired, "onExpired");
    }

    /** Expires {@code delayNanos} from now. */
    public void expireIn(final long delayNanos) {
      expireAt(now() + delayNanos);
    }

    /** Expires at {@code nanos} of the loop's ticker ({@link #now()}). */
    public void expireAt(final long nanos) {
      expiresAt = nanos;
      armed = true;
      if (timer != null) {
        if (firesAt <= nanos) {
          // Fires no later than needed: it re-arms itself for the rest then.
          return;
        }
        timer.cancel(false);
        timer = null;
      }
      final long now = now();
      schedule(now, nanos - now);
    }

    /** Stops it; the task does not run unless the deadline is set again. */
    public void cancel() {
      armed = false;
      if (timer != null) {
        timer.cancel(false);
        timer = null;
      }
    }

    /** Whether it is set and has neither expired nor been cancelled. */
    public boolean isArmed() {
      return armed;
    }

    /** The loop's ticker now, in nanoseconds: the time base of {@link #expireAt}. */
    public long now() {
      return owner.ctx().executor().ticker().nanoTime();
    }

    private void schedule(final long now, final long delayNanos) {
      firesAt = now + delayNanos;
      timer = owner.ctx().executor().schedule(fire, delayNanos, TimeUnit.NANOSECONDS);
    }

    private void fire() {
      timer = null;
      if (!armed) {
        return;
      }
      final long now = now();
      final long left = expiresAt - now;
      if (left > 0) {
        schedule(now, left);
        return;
      }
      armed = false;
      onExpired.run();
    }
  }
}
