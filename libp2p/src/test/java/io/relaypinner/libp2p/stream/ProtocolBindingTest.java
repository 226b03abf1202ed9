package io.relaypinner.libp2p.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.mux.yamux.YamuxSessionListener;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ProtocolBinding} without sockets: the host's only loop is an embedded channel's on a
 * {@link MockTicker}, so the order of loop tasks, the timers and what close stops are checked step
 * by step. Inbound streams, identify and connection events need real connections: {@code
 * BitswapIT}, {@code GossipsubIT} and {@code PeerStreamsIT} cover them.
 */
class ProtocolBindingTest {
  private static final List<String> IDS = List.of("/test/2.0.0", "/test/1.0.0");

  private final MockTicker ticker = Ticker.newMockTicker();
  private final EmbeddedChannel loop = EmbeddedChannel.builder().ticker(ticker).build();
  private final Host host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
      HostConfig.DEFAULT, new EventLoops(loop.eventLoop(), NioServerSocketChannel.class,
          NioSocketChannel.class, "embedded"), new MutableClock(Instant.EPOCH), YamuxSessionListener.NOOP, ticker);
  private final List<String> events = new ArrayList<>();
  private final ProtocolBinding<String> binding = new ProtocolBinding<>(host,
      new PeerStreams.Options("test", IDS, 8, 1024, true, true, 3, Duration.ofMillis(200), null,
          false), new StringPolicy(), new PeerStreams.Events<>() { }, new Owner());

  private static final class StringPolicy implements PeerStreams.Policy<String> {
    @Override
    public byte[] encode(final String message, final String protocol) {
      return message.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public int size(final String message) {
      return message.length();
    }

    @Override
    public PeerStreams.Overflow overflow(final String message) {
      return PeerStreams.Overflow.DROP_NEW;
    }
  }

  private final class Owner implements ProtocolBinding.Owner {
    @Override
    public void installInbound(final Channel stream, final String protocol,
        final Connection connection) {
      events.add("install " + protocol);
    }

    @Override
    public void peerSpeaks(final PeerId peer) {
      events.add("speaks");
    }

    @Override
    public void peerGone(final PeerId peer) {
      events.add("gone");
    }

    @Override
    public void afterTask() {
      events.add("after");
    }

    @Override
    public void closed() {
      events.add("closed");
    }
  }

  @AfterEach
  void tearDown() {
    loop.finishAndReleaseAll();
  }

  private void advance(final Duration duration) {
    ticker.advance(duration.toNanos(), TimeUnit.NANOSECONDS);
    loop.runScheduledPendingTasks();
    loop.runPendingTasks();
  }

  @Test
  void start_shouldRegisterEveryId_andCloseUnregistersThem() {
    binding.start();
    assertThat(host.protocols().protocols()).containsAll(IDS);
    assertThat(binding.loop()).isSameAs(loop.eventLoop());

    binding.close();
    loop.runPendingTasks();

    assertThat(host.protocols().protocols()).doesNotContainAnyElementsOf(IDS);
    assertThat(binding.isClosed()).isTrue();
  }

  @Test
  void onLoop_shouldRunTasksInOrderOnTheLoop_eachFollowedByTheOwnersHook() {
    binding.onLoop(() -> events.add("a"));
    binding.onLoop(() -> {
      throw new IllegalStateException("a task that fails");
    });
    binding.onLoopAlways(() -> events.add("b"));
    assertThat(events).isEmpty();

    loop.runPendingTasks();

    // The failure is logged; the tasks after it still run.
    assertThat(events).containsExactly("a", "after", "after", "b", "after");
  }

  @Test
  void close_shouldSkipQueuedAndLaterOnLoopTasks_butRunOnLoopAlways_thenTellTheOwner() {
    binding.start();
    binding.onLoop(() -> events.add("queued before close"));
    binding.close();
    binding.onLoop(() -> events.add("after close"));
    binding.onLoopAlways(() -> events.add("always"));

    loop.runPendingTasks();

    // A task queued before close and run after it is skipped (the hook still runs).
    assertThat(events).containsExactly("after", "closed", "after", "always", "after");
  }

  @Test
  void every_shouldRunAtThePeriod_untilClose() {
    binding.every(Duration.ofMillis(100), Duration.ofSeconds(1), () -> events.add("tick"));

    advance(Duration.ofMillis(99));
    assertThat(events).isEmpty();
    advance(Duration.ofMillis(1));
    assertThat(events).containsExactly("tick", "after");
    advance(Duration.ofSeconds(2));
    assertThat(events).filteredOn("tick"::equals).hasSize(3);

    binding.close();
    loop.runPendingTasks();
    events.clear();
    advance(Duration.ofSeconds(5));
    assertThat(events).isEmpty();
  }

  @Test
  void later_shouldRunAfterTheDelay_unlessClosedBy() {
    binding.later(Duration.ofSeconds(1), () -> events.add("first"));
    binding.later(Duration.ofSeconds(2), () -> events.add("second"));

    advance(Duration.ofSeconds(1));
    assertThat(events).containsExactly("first", "after");

    binding.close();
    advance(Duration.ofSeconds(1));
    assertThat(events).doesNotContain("second");
  }

  @Test
  void call_shouldCompleteWithTheValueOrTheFailure_afterTheOwnersHook() {
    final CompletableFuture<Integer> value = binding.call(() -> {
      events.add("call");
      return 42;
    });
    final CompletableFuture<Integer> failed = binding.call(() -> {
      throw new IllegalArgumentException("no");
    });
    value.thenRun(() -> events.add("completed"));
    assertThat(value).isNotDone();

    loop.runPendingTasks();

    assertThat(value).isCompletedWithValue(42);
    assertThatThrownBy(failed::join).hasCauseInstanceOf(IllegalArgumentException.class);
    assertThat(events).containsExactly("call", "after", "completed", "after");
  }
}
