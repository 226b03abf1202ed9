package io.relaypinner.libp2p.protocol.ping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PingProtocolTest {
  private final AtomicLong clock = new AtomicLong(1_000_000L);
  private final PingProtocol ping = new PingProtocol(PingConfig.DEFAULT, new Random(7), clock::get);
  private final TestStream stream = new TestStream();

  @AfterEach
  void tearDown() {
    assertThat(stream.finishAndCountUnreleased()).as("unreleased bytes").isZero();
  }

  private static byte[] bytes(final int length, final int seed) {
    final byte[] out = new byte[length];
    new Random(seed).nextBytes(out);
    return out;
  }

  private static Throwable failure(final CompletableFuture<?> future) {
    assertThat(future).isCompletedExceptionally();
    try {
      future.get();
      throw new AssertionError("not failed");
    } catch (final ExecutionException e) {
      return e.getCause();
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  // ---- responder

  @Test
  void responder_shouldEchoPayload_whenSplitAcrossReads() {
    ping.installResponder(stream);
    final byte[] payload = bytes(32, 1);
    stream.receive(Arrays.copyOfRange(payload, 0, 5));
    assertThat(stream.drainOutbound()).isEmpty();
    stream.receive(Arrays.copyOfRange(payload, 5, 25));
    assertThat(stream.drainOutbound()).isEmpty();
    stream.receive(Arrays.copyOfRange(payload, 25, 32));
    assertThat(stream.drainOutbound()).isEqualTo(payload);
    assertThat(stream.isOpen()).isTrue();
  }

  @Test
  void responder_shouldEchoEachPayload_whenSeveralPingsArriveInOneRead() {
    ping.installResponder(stream);
    final byte[] data = bytes(4 * 32, 2);
    stream.receive(Arrays.copyOfRange(data, 0, 3 * 32 + 10));
    assertThat(stream.drainOutbound()).isEqualTo(Arrays.copyOfRange(data, 0, 3 * 32));
    stream.receive(Arrays.copyOfRange(data, 3 * 32 + 10, 4 * 32));
    assertThat(stream.drainOutbound()).isEqualTo(Arrays.copyOfRange(data, 3 * 32, 4 * 32));
  }

  @Test
  void responder_shouldEchoWhole32ByteUnitsAndDropTheRest_whenRandomBytesThenFin() {
    ping.installResponder(stream);
    final byte[] data = bytes(1000, 3);
    final Random chunks = new Random(4);
    final ByteArrayOutputStream echoed = new ByteArrayOutputStream();
    int pos = 0;
    while (pos < data.length) {
      final int n = Math.min(data.length - pos, 1 + chunks.nextInt(70));
      stream.receive(Arrays.copyOfRange(data, pos, pos + n));
      echoed.writeBytes(stream.drainOutbound());
      pos += n;
    }
    stream.receiveFin();
    echoed.writeBytes(stream.drainOutbound());
    assertThat(echoed.toByteArray()).isEqualTo(Arrays.copyOfRange(data, 0, 992));
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void responder_shouldCloseAfterTheEcho_whenFinFollowsThePayload() {
    ping.installResponder(stream);
    final byte[] payload = bytes(32, 5);
    stream.receive(payload);
    stream.receiveFin();
    assertThat(stream.drainOutbound()).isEqualTo(payload);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void responder_shouldClose_whenIdleForIdleTimeout() {
    ping.installResponder(stream);
    stream.advanceTimeBy(59, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(stream.isOpen()).isTrue();
    stream.advanceTimeBy(2, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void responder_shouldStayOpen_whenPingsKeepComingWithinIdleTimeout() {
    ping.installResponder(stream);
    for (int i = 0; i < 5; i++) {
      stream.advanceTimeBy(40, TimeUnit.SECONDS);
      stream.runScheduledPendingTasks();
      stream.receive(bytes(32, i));
      assertThat(stream.drainOutbound()).hasSize(32);
    }
    assertThat(stream.isOpen()).isTrue();
  }

  @Test
  void responder_shouldClose_whenOpenLongerThanMaxStreamDurationDespitePings() {
    final PingProtocol shortLived = new PingProtocol(PingConfig.builder()
        .idleTimeout(Duration.ofSeconds(60)).maxStreamDuration(Duration.ofSeconds(90)).build(),
        stream.eventLoop().ticker());
    shortLived.installResponder(stream);
    stream.advanceTimeBy(50, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    stream.receive(bytes(32, 9));
    assertThat(stream.drainOutbound()).hasSize(32);
    stream.advanceTimeBy(41, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void responder_shouldDropPartialPayload_whenStreamIsReset() {
    ping.installResponder(stream);
    stream.receive(bytes(20, 6));
    stream.close();
    assertThat(stream.drainOutbound()).isEmpty();
  }

  @Test
  void responder_shouldPauseReading_whileTheEchoesCannotBeWritten() {
    final AtomicBoolean holdFlush = new AtomicBoolean(true);
    stream.config().setWriteBufferWaterMark(new WriteBufferWaterMark(1, 2));
    stream.pipeline().addLast(new ChannelOutboundHandlerAdapter() {
      @Override
      public void flush(final ChannelHandlerContext ctx) {
        if (!holdFlush.get()) {
          ctx.flush();
        }
      }
    });
    ping.installResponder(stream);
    final byte[] data = bytes(3 * 32, 11);
    stream.receive(data);
    assertThat(stream.isWritable()).isFalse();
    assertThat(stream.config().isAutoRead()).isFalse();
    holdFlush.set(false);
    stream.flush();
    stream.runPendingTasks();
    assertThat(stream.config().isAutoRead()).isTrue();
    assertThat(stream.drainOutbound()).isEqualTo(data);
  }

  @Test
  void responder_shouldClose_whenAnExceptionReachesIt() {
    ping.installResponder(stream);
    stream.receive(bytes(10, 12));
    stream.pipeline().fireExceptionCaught(new IOException("connection lost"));
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void responder_shouldStartItsTimers_whenTheStreamBecomesActiveAfterInstall() {
    final TestStream inactive = new TestStream(false);
    try {
      inactive.pipeline().addLast(ping.newResponder());
      inactive.activate();
      inactive.advanceTimeBy(61, TimeUnit.SECONDS);
      inactive.runScheduledPendingTasks();
      assertThat(inactive.isOpen()).isFalse();
    } finally {
      assertThat(inactive.finishAndCountUnreleased()).as("unreleased bytes").isZero();
    }
  }

  // ---- initiator

  @Test
  void ping_shouldReportRttFromInjectedClock_whenEchoMatches() {
    final PingController controller = ping.installInitiator(stream);
    final CompletableFuture<Duration> rtt = controller.ping();
    final byte[] sent = stream.drainOutbound();
    assertThat(sent).hasSize(32);
    clock.addAndGet(1_234_567L);
    stream.receive(sent);
    assertThat(rtt).isCompletedWithValue(Duration.ofNanos(1_234_567L));
    assertThat(stream.isOpen()).isTrue();
  }

  @Test
  void ping_shouldRunSeveralPingsSequentially_onOneStream() {
    final PingController controller = ping.installInitiator(stream);
    byte[] previous = null;
    for (int i = 1; i <= 3; i++) {
      final CompletableFuture<Duration> rtt = controller.ping();
      final byte[] sent = stream.drainOutbound();
      assertThat(sent).hasSize(32).isNotEqualTo(previous);
      clock.addAndGet(i * 1000L);
      // The echo split across two reads.
      stream.receive(Arrays.copyOfRange(sent, 0, 11));
      assertThat(rtt).isNotDone();
      stream.receive(Arrays.copyOfRange(sent, 11, 32));
      assertThat(rtt).isCompletedWithValue(Duration.ofNanos(i * 1000L));
      previous = sent;
    }
  }

  @Test
  void ping_shouldFailWithBadPeerAndClose_whenEchoDiffers() {
    final CompletableFuture<Duration> rtt = ping.installInitiator(stream).ping();
    final byte[] sent = stream.drainOutbound();
    sent[31] ^= 1;
    stream.receive(sent);
    assertThat(failure(rtt)).isInstanceOf(BadPeerException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void ping_shouldTimeOutAndClose_whenNoEchoWithinTimeout() {
    final CompletableFuture<Duration> rtt = ping.installInitiator(stream).ping();
    stream.drainOutbound();
    stream.advanceTimeBy(9, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(rtt).isNotDone();
    stream.advanceTimeBy(2, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(failure(rtt)).isInstanceOf(TimeoutException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void ping_shouldTimeOutTheSecondPing_fromItsOwnStart() {
    final PingController controller = ping.installInitiator(stream);
    final CompletableFuture<Duration> first = controller.ping();
    stream.advanceTimeBy(8, TimeUnit.SECONDS);
    stream.receive(stream.drainOutbound());
    assertThat(first).isCompleted();
    final CompletableFuture<Duration> second = controller.ping();
    stream.drainOutbound();
    // The first ping's timer fires here and must re-arm for the second ping's deadline.
    stream.advanceTimeBy(3, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(second).isNotDone();
    stream.advanceTimeBy(8, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(failure(second)).isInstanceOf(TimeoutException.class);
  }

  @Test
  void ping_shouldBeRefused_whenAPingIsInFlight() {
    final PingController controller = ping.installInitiator(stream);
    final CompletableFuture<Duration> first = controller.ping();
    final CompletableFuture<Duration> second = controller.ping();
    assertThat(failure(second)).isInstanceOf(IllegalStateException.class);
    assertThat(first).isNotDone();
    stream.receive(stream.drainOutbound());
    assertThat(first).isCompleted();
  }

  @Test
  void ping_shouldFailWithViolation_whenEchoIsLongerThan32Bytes() {
    final CompletableFuture<Duration> rtt = ping.installInitiator(stream).ping();
    final byte[] sent = stream.drainOutbound();
    final byte[] longer = Arrays.copyOf(sent, 33);
    stream.receive(longer);
    assertThat(failure(rtt)).isInstanceOf(ProtocolViolationException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void initiator_shouldCloseWithViolation_whenBytesArriveWithNoPingInFlight() {
    final PingController controller = ping.installInitiator(stream);
    stream.receive(bytes(32, 8));
    assertThat(stream.isOpen()).isFalse();
    assertThat(failure(controller.ping())).isInstanceOf(ClosedChannelException.class);
  }

  @Test
  void ping_shouldFailWithViolation_whenFinArrivesBeforeTheEcho() {
    final CompletableFuture<Duration> rtt = ping.installInitiator(stream).ping();
    stream.drainOutbound();
    stream.receiveFin();
    assertThat(failure(rtt)).isInstanceOf(ProtocolViolationException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void ping_shouldFailClosed_whenStreamIsReset() {
    final CompletableFuture<Duration> rtt = ping.installInitiator(stream).ping();
    stream.drainOutbound();
    stream.close();
    assertThat(failure(rtt)).isInstanceOf(ClosedChannelException.class);
  }

  @Test
  void close_shouldFailThePingInFlightAndCloseTheStream() {
    final PingController controller = ping.installInitiator(stream);
    final CompletableFuture<Duration> rtt = controller.ping();
    stream.drainOutbound();
    controller.close();
    assertThat(failure(rtt)).isInstanceOf(ClosedChannelException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void pingAndClose_shouldHalfCloseAfterThePayload_andCloseAfterTheEcho() {
    final CompletableFuture<Duration> rtt = ping.pingOnce(stream);
    final byte[] sent = stream.drainOutbound();
    assertThat(stream.isOutputShutdown()).isTrue();
    assertThat(stream.isOpen()).isTrue();
    clock.addAndGet(500);
    stream.receive(sent);
    assertThat(rtt).isCompletedWithValue(Duration.ofNanos(500));
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void pingAndClose_shouldCloseAfterTheEcho_whenStreamCannotHalfClose() {
    final EmbeddedChannel plain = new EmbeddedChannel();
    final CompletableFuture<Duration> rtt = ping.pingOnce(plain);
    final Object sent = plain.readOutbound();
    assertThat(plain.isOpen()).isTrue();
    plain.writeInbound(sent);
    assertThat(rtt).isCompleted();
    assertThat(plain.isOpen()).isFalse();
    assertThat(plain.finishAndReleaseAll()).isFalse();
  }

  // ---- both ends

  @Test
  void initiatorAndResponder_shouldPingRepeatedly_whenLinkedBackToBack() {
    final TestStream remote = new TestStream();
    try {
      ping.installResponder(remote);
      final TestStream.Link link = TestStream.link(stream, remote);
      final PingController controller = ping.installInitiator(stream);
      for (int i = 0; i < 3; i++) {
        final CompletableFuture<Duration> rtt = controller.ping();
        link.pump();
        assertThat(rtt).isCompleted();
        assertThat(rtt.join().isNegative()).isFalse();
      }
      final CompletableFuture<Duration> last = controller.pingAndClose();
      link.pump();
      assertThat(last).isCompleted();
      assertThat(stream.isOpen()).isFalse();
      assertThat(remote.isOpen()).isFalse();
    } finally {
      assertThat(remote.finishAndCountUnreleased()).as("unreleased bytes").isZero();
    }
  }

  @Test
  void responder_shouldEchoJsLibp2p3Initiator_whichHalfClosesRightAfterSending() {
    final TestStream remote = new TestStream();
    try {
      ping.installResponder(remote);
      final byte[] payload = bytes(32, 10);
      // js-libp2p 3.x: send(data), then close() (our FIN) before the echo arrives.
      remote.receive(payload);
      remote.receiveFin();
      assertThat(remote.drainOutbound()).isEqualTo(payload);
      assertThat(remote.isOpen()).isFalse();
    } finally {
      assertThat(remote.finishAndCountUnreleased()).as("unreleased bytes").isZero();
    }
  }

  @Test
  void finishAndCountUnreleased_shouldSeeABufferNobodyReleased() {
    final TestStream leaky = new TestStream();
    final ByteBuf leaked = leaky.alloc().buffer(32);
    assertThat(leaky.finishAndCountUnreleased()).isPositive();
    leaked.release();
    assertThat(leaky.finishAndCountUnreleased()).isZero();
  }

  // ---- config

  @Test
  void build_shouldRejectLimits_whenOutOfRange() {
    assertThatThrownBy(() -> PingConfig.builder().timeout(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout");
    assertThatThrownBy(() -> PingConfig.builder().idleTimeout(Duration.ofHours(2)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("idleTimeout");
    assertThatThrownBy(() -> PingConfig.builder().maxStreamDuration(null).build())
        .isInstanceOf(NullPointerException.class);
    assertThat(PingConfig.DEFAULT.toBuilder().build()).isEqualTo(PingConfig.DEFAULT);
    assertThat(PingConfig.DEFAULT.timeout()).isEqualTo(Duration.ofSeconds(10));
  }
}
