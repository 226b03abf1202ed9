package io.relaypinner.libp2p.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link ActivatedHandler} on embedded channels with frozen time: {@code onActivated} runs exactly
 * once whichever way the handler meets an active channel, the lifecycle events still reach the
 * next handler, and a deadline fires on time, follows a later or earlier expiry, and dies with the
 * stream.
 */
class ActivatedHandlerTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  private final List<String> events = new ArrayList<>();

  /** Records its hooks; its deadline records "expired" with the time it ran at. */
  private final class Recorder extends ActivatedHandler {
    final Deadline deadline = deadline(() -> events.add("expired"));
    long armOnActivation = -1;

    @Override
    protected void onAdded(final ChannelHandlerContext ctx) {
      events.add("added");
    }

    @Override
    protected void onActivated(final ChannelHandlerContext ctx) {
      events.add("activated");
      if (armOnActivation >= 0) {
        deadline.expireIn(armOnActivation);
      }
    }

    @Override
    protected void onInactive(final ChannelHandlerContext ctx) {
      events.add("inactive" + (deadline.isArmed() ? " (armed)" : ""));
    }

    @Override
    protected void onRemoved(final ChannelHandlerContext ctx) {
      events.add("removed" + (deadline.isArmed() ? " (armed)" : ""));
    }
  }

  /** Behind the handler under test: sees what it passes on. */
  private final class Next extends ChannelInboundHandlerAdapter {
    @Override
    public void channelActive(final ChannelHandlerContext ctx) {
      events.add("next active");
    }

    @Override
    public void channelInactive(final ChannelHandlerContext ctx) {
      events.add("next inactive");
    }
  }

  /** An embedded channel that is registered but not active until the test says so. */
  private static final class LateChannel extends EmbeddedChannel {
    boolean active;

    @Override
    public boolean isActive() {
      return active && super.isActive();
    }
  }

  private static EmbeddedChannel frozen() {
    final EmbeddedChannel channel = new EmbeddedChannel();
    channel.freezeTime();
    return channel;
  }

  /** A frozen-time channel with {@code recorder}, whose deadline is set on activation. */
  private static EmbeddedChannel armedAt(final Recorder recorder, final long nanos) {
    recorder.armOnActivation = nanos;
    final EmbeddedChannel channel = frozen();
    channel.pipeline().addLast(recorder);
    return channel;
  }

  private static void advance(final EmbeddedChannel channel, final long nanos) {
    channel.advanceTimeBy(nanos, TimeUnit.NANOSECONDS);
    channel.runScheduledPendingTasks();
  }

  @Test
  void onActivated_shouldRunOnceAtAdd_whenTheChannelIsActiveAlready() {
    final EmbeddedChannel channel = frozen();
    channel.pipeline().addLast(new Recorder());
    channel.pipeline().fireChannelActive();

    assertThat(events).containsExactly("added", "activated");
  }

  @Test
  void onActivated_shouldRunOnce_whenTheHandlerSeesBothAddedAndChannelActive() {
    // Handlers given to the constructor see handlerAdded with the channel active, then
    // channelActive as well.
    final EmbeddedChannel channel = new EmbeddedChannel(new Recorder(), new Next());

    assertThat(events).containsExactly("added", "activated", "next active");
    assertThat(channel.isActive()).isTrue();
  }

  @Test
  void onActivated_shouldWaitForChannelActive_whenAddedToAnInactiveChannel() {
    final LateChannel channel = new LateChannel();
    final Recorder recorder = new Recorder();
    channel.pipeline().addLast(recorder, new Next());
    assertThat(events).containsExactly("added");
    assertThat(recorder.isActivated()).isFalse();

    channel.active = true;
    channel.pipeline().fireChannelActive();
    channel.pipeline().fireChannelActive();

    assertThat(events).containsExactly("added", "activated", "next active", "next active");
    assertThat(recorder.isActivated()).isTrue();
  }

  @Test
  void lifecycle_shouldPassInactiveOn_andCallTheHooks() {
    final EmbeddedChannel channel = frozen();
    channel.pipeline().addLast(new Recorder(), new Next());
    channel.close();

    assertThat(events).containsExactly("added", "activated", "inactive", "next inactive",
        "removed");
  }

  @Test
  void deadline_shouldExpireOnTime_onTheLoop() {
    final Recorder recorder = new Recorder();
    final EmbeddedChannel channel = armedAt(recorder, 10 * SECOND);

    advance(channel, 10 * SECOND - 1);
    assertThat(events).doesNotContain("expired");
    assertThat(recorder.deadline.isArmed()).isTrue();

    advance(channel, 1);
    assertThat(events).containsOnlyOnce("expired");
    assertThat(recorder.deadline.isArmed()).isFalse();
    advance(channel, 60 * SECOND);
    assertThat(events).containsOnlyOnce("expired");
  }

  @Test
  void deadline_shouldExpireAtTheLaterTime_whenPushedBack() {
    final Recorder recorder = new Recorder();
    final EmbeddedChannel channel = armedAt(recorder, 10 * SECOND);

    advance(channel, 6 * SECOND);
    recorder.deadline.expireIn(10 * SECOND);
    // The first timer fires at 10 s and re-arms itself for the 6 s left.
    advance(channel, 4 * SECOND);
    assertThat(events).doesNotContain("expired");
    advance(channel, 6 * SECOND - 1);
    assertThat(events).doesNotContain("expired");
    advance(channel, 1);
    assertThat(events).containsOnlyOnce("expired");
  }

  @Test
  void deadline_shouldExpireAtTheEarlierTime_whenBroughtForward() {
    final Recorder recorder = new Recorder();
    final EmbeddedChannel channel = armedAt(recorder, 10 * SECOND);

    recorder.deadline.expireAt(recorder.deadline.now() + SECOND);
    advance(channel, SECOND);

    assertThat(events).containsOnlyOnce("expired");
    advance(channel, 10 * SECOND);
    assertThat(events).containsOnlyOnce("expired");
  }

  @Test
  void deadline_shouldNotExpire_whenCancelled_andMayBeSetAgain() {
    final Recorder recorder = new Recorder();
    final EmbeddedChannel channel = armedAt(recorder, SECOND);

    recorder.deadline.cancel();
    advance(channel, 2 * SECOND);
    assertThat(events).doesNotContain("expired");

    recorder.deadline.expireIn(SECOND);
    advance(channel, SECOND);
    assertThat(events).containsOnlyOnce("expired");
  }

  @Test
  void deadline_shouldBeCancelled_whenTheChannelCloses() {
    final Recorder recorder = new Recorder();
    final EmbeddedChannel channel = armedAt(recorder, SECOND);

    channel.close();
    advance(channel, 2 * SECOND);

    // Cancelled before the hook ran.
    assertThat(events).containsExactly("added", "activated", "inactive", "removed");
  }

  @Test
  void deadline_shouldBeCancelled_whenTheHandlerIsRemoved() {
    final Recorder recorder = new Recorder();
    final EmbeddedChannel channel = armedAt(recorder, SECOND);

    channel.pipeline().remove(recorder);
    advance(channel, 2 * SECOND);

    assertThat(events).containsExactly("added", "activated", "removed");
    assertThat(channel.isOpen()).isTrue();
  }
}
