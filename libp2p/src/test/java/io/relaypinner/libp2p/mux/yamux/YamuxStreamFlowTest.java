package io.relaypinner.libp2p.mux.yamux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class YamuxStreamFlowTest {
  private static final int WINDOW = YamuxConfig.SPEC_INITIAL_WINDOW;
  private static final int MAX = 16 * 1024 * 1024;
  private static final long RTT = TimeUnit.MILLISECONDS.toNanos(50);

  /** The flow's clock: a test moves it by hand. */
  private long now = 1_000_000_000L;

  private YamuxStreamFlow flow(final int initialWindow, final int maxWindow) {
    return new YamuxStreamFlow(7, initialWindow, maxWindow, () -> now);
  }

  private YamuxStreamFlow flow() {
    return flow(WINDOW, MAX);
  }

  // ---- a new stream ----

  @Test
  void newFlow_shouldAssumeTheSpecWindowToSend_andGrantTheInitialWindow() {
    final YamuxStreamFlow flow = flow(4 * WINDOW, MAX);
    assertThat(flow.sendWindow()).isEqualTo(WINDOW);
    assertThat(flow.canSend()).isTrue();
    assertThat(flow.recvWindow()).isEqualTo(4 * WINDOW);
    assertThat(flow.recvCredit()).isEqualTo(4 * WINDOW);
    assertThat(flow.unconsumed()).isZero();
  }

  @Test
  void initialWindowIncrement_shouldBeTheWindowBeyondTheSpecs_forTheSynOrAck() {
    assertThat(flow(WINDOW, MAX).initialWindowIncrement()).isZero();
    assertThat(flow(4 * WINDOW, MAX).initialWindowIncrement()).isEqualTo(3 * WINDOW);
    assertThat(flow(YamuxConfig.MAX_WINDOW_LIMIT, YamuxConfig.MAX_WINDOW_LIMIT)
            .initialWindowIncrement())
        .isEqualTo(YamuxConfig.MAX_WINDOW_LIMIT - WINDOW);
  }

  @Test
  void newFlow_shouldRefuseWindows_whenBelowTheSpecOrAboveTheMaximum() {
    assertThatThrownBy(() -> flow(WINDOW - 1, MAX)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> flow(2 * WINDOW, 2 * WINDOW - 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new YamuxStreamFlow(1, WINDOW, MAX, null))
        .isInstanceOf(NullPointerException.class);
  }

  // ---- sending ----

  @Test
  void takeSendWindow_shouldGrantWhatTheWindowAllows_andWait_whenItIsEmpty() {
    final YamuxStreamFlow flow = flow();
    assertThat(flow.takeSendWindow(64 * 1024)).isEqualTo(64 * 1024);
    assertThat(flow.sendWindow()).isEqualTo(WINDOW - 64 * 1024);
    assertThat(flow.takeSendWindow(WINDOW)).isEqualTo(WINDOW - 64 * 1024);
    assertThat(flow.sendWindow()).isZero();
    assertThat(flow.canSend()).isFalse();
    assertThat(flow.takeSendWindow(1)).isZero();
    assertThat(flow.sendWindow()).isZero();
  }

  @Test
  void incrementSendWindow_shouldAddTheCredit_andResumeSending() {
    final YamuxStreamFlow flow = flow();
    flow.takeSendWindow(WINDOW);
    flow.incrementSendWindow(100);
    assertThat(flow.canSend()).isTrue();
    assertThat(flow.takeSendWindow(1000)).isEqualTo(100);
    flow.incrementSendWindow(3L * WINDOW);
    assertThat(flow.sendWindow()).isEqualTo(3L * WINDOW);
  }

  @Test
  void incrementSendWindow_shouldAllowExactly2to32Minus1_andRefuseMore() {
    final YamuxStreamFlow flow = flow();
    flow.incrementSendWindow(YamuxFrame.MAX_LENGTH - WINDOW);
    assertThat(flow.sendWindow()).isEqualTo(YamuxFrame.MAX_LENGTH);
    // A window above 2^31 still hands out int-sized frames.
    assertThat(flow.takeSendWindow(Integer.MAX_VALUE)).isEqualTo(Integer.MAX_VALUE);
    assertThat(flow.sendWindow()).isEqualTo(YamuxFrame.MAX_LENGTH - Integer.MAX_VALUE);

    flow.incrementSendWindow(Integer.MAX_VALUE);
    assertThatThrownBy(() -> flow.incrementSendWindow(1))
        .isInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("stream 7")
        .hasMessageContaining("to 4294967296");
    assertThat(flow.sendWindow()).isEqualTo(YamuxFrame.MAX_LENGTH);
  }

  // ---- receiving ----

  @Test
  void receiveData_shouldTakeFromTheCredit_andCountTheBytesUnconsumed() {
    final YamuxStreamFlow flow = flow();
    flow.receiveData(1000);
    flow.receiveData(0);
    assertThat(flow.recvCredit()).isEqualTo(WINDOW - 1000);
    assertThat(flow.unconsumed()).isEqualTo(1000);
    flow.consumed(400);
    assertThat(flow.unconsumed()).isEqualTo(600);
    assertThat(flow.recvCredit()).isEqualTo(WINDOW - 1000);
    flow.receiveData(WINDOW - 1000);
    assertThat(flow.recvCredit()).isZero();
    assertThat(flow.recvCredit() + flow.unconsumed()).isLessThanOrEqualTo(flow.recvWindow());
  }

  @Test
  void receiveData_shouldBeAProtocolViolation_whenItExceedsTheCredit_andCountNothing() {
    final YamuxStreamFlow flow = flow();
    flow.receiveData(WINDOW - 10);
    assertThatThrownBy(() -> flow.receiveData(11))
        .isInstanceOf(ProtocolViolationException.class)
        .hasMessage("yamux DATA frame of 11 bytes exceeds the receive window of 10 on stream 7");
    assertThat(flow.recvCredit()).isEqualTo(10);
    assertThat(flow.unconsumed()).isEqualTo(WINDOW - 10);
  }

  @Test
  void violations_shouldNameTheStreamUnsigned_whenItsIdIsAbove2to31() {
    final YamuxStreamFlow flow = new YamuxStreamFlow(0xFFFF_FFFF, WINDOW, MAX, () -> now);
    assertThatThrownBy(() -> flow.receiveData(WINDOW + 1))
        .hasMessageEndingWith("on stream 4294967295");
    assertThat(flow.toString()).contains("stream=4294967295");
  }

  // ---- returning credit ----

  @Test
  void nextWindowUpdate_shouldGrantNothing_untilHalfTheWindowIsConsumed() {
    final YamuxStreamFlow flow = flow();
    assertThat(flow.nextWindowUpdate(-1)).isZero();
    flow.receiveData(WINDOW);
    assertThat(flow.nextWindowUpdate(-1)).as("received but not read").isZero();
    flow.consumed(WINDOW / 2 - 1);
    assertThat(flow.nextWindowUpdate(-1)).isZero();
    assertThat(flow.recvCredit()).isZero();

    flow.consumed(1);
    assertThat(flow.nextWindowUpdate(-1)).isEqualTo(WINDOW / 2);
    assertThat(flow.recvCredit()).isEqualTo(WINDOW / 2);
    assertThat(flow.nextWindowUpdate(-1)).as("granted once").isZero();
  }

  @Test
  void nextWindowUpdate_shouldGrantEverythingConsumed_whenMoreThanHalfIsFree() {
    final YamuxStreamFlow flow = flow();
    flow.receiveData(WINDOW);
    flow.consumed(WINDOW - 100);
    assertThat(flow.nextWindowUpdate(-1)).isEqualTo(WINDOW - 100);
    assertThat(flow.recvCredit() + flow.unconsumed()).isEqualTo(WINDOW);
  }

  @Test
  void nextWindowUpdate_shouldCountBytesAnnouncedButNotArrived_asUnconsumed() {
    final YamuxStreamFlow flow = flow();
    // A DATA header announced a whole window; only half of its payload was read so far.
    flow.receiveData(WINDOW);
    flow.consumed(WINDOW / 2);
    assertThat(flow.nextWindowUpdate(-1)).isEqualTo(WINDOW / 2);
    flow.receiveData(WINDOW / 2);
    assertThatThrownBy(() -> flow.receiveData(1)).isInstanceOf(ProtocolViolationException.class);
  }

  // ---- auto-tuning ----

  @Test
  void nextWindowUpdate_shouldNotGrow_withoutAMeasuredRoundTrip() {
    final YamuxStreamFlow flow = flow();
    flow.receiveData(WINDOW);
    flow.consumed(WINDOW);
    assertThat(flow.nextWindowUpdate(-1)).isEqualTo(WINDOW);
    assertThat(flow.recvWindow()).isEqualTo(WINDOW);
  }

  @Test
  void nextWindowUpdate_shouldDoubleTheWindow_whenHalfIsUsedWithinFourRoundTrips() {
    final YamuxStreamFlow flow = flow();
    now += 4 * RTT - 1;
    flow.receiveData(WINDOW / 2);
    flow.consumed(WINDOW / 2);
    // The consumed half back, plus the window's growth.
    assertThat(flow.nextWindowUpdate(RTT)).isEqualTo(WINDOW / 2 + WINDOW);
    assertThat(flow.recvWindow()).isEqualTo(2 * WINDOW);
    assertThat(flow.recvCredit()).isEqualTo(2 * WINDOW);
    flow.receiveData(2 * WINDOW);
    assertThatThrownBy(() -> flow.receiveData(1)).isInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void nextWindowUpdate_shouldNotGrow_whenHalfTheWindowTookFourRoundTripsOrMore() {
    final YamuxStreamFlow flow = flow();
    now += 4 * RTT;
    flow.receiveData(WINDOW / 2);
    flow.consumed(WINDOW / 2);
    assertThat(flow.nextWindowUpdate(RTT)).isEqualTo(WINDOW / 2);
    assertThat(flow.recvWindow()).isEqualTo(WINDOW);
  }

  @Test
  void nextWindowUpdate_shouldMeasureFromTheLastUpdate_notFromTheStreamsStart() {
    final YamuxStreamFlow flow = flow();
    now += 10 * RTT;
    flow.receiveData(WINDOW / 2);
    flow.consumed(WINDOW / 2);
    assertThat(flow.nextWindowUpdate(RTT)).isEqualTo(WINDOW / 2);
    // The next half window comes fast: now the window grows.
    now += RTT;
    flow.receiveData(WINDOW / 2);
    flow.consumed(WINDOW / 2);
    assertThat(flow.nextWindowUpdate(RTT)).isEqualTo(WINDOW / 2 + WINDOW);
    assertThat(flow.recvWindow()).isEqualTo(2 * WINDOW);
  }

  @Test
  void nextWindowUpdate_shouldNotRestartTheMeasure_whenNoUpdateIsDue() {
    final YamuxStreamFlow flow = flow();
    flow.receiveData(WINDOW / 2);
    flow.consumed(WINDOW / 2 - 1);
    now += 3 * RTT;
    assertThat(flow.nextWindowUpdate(RTT)).isZero();
    now += RTT / 2;
    flow.consumed(1);
    assertThat(flow.nextWindowUpdate(RTT)).isEqualTo(WINDOW / 2 + WINDOW);
  }

  @Test
  void nextWindowUpdate_shouldGrowUpToTheMaximum_andNoFurther() {
    final int max = 3 * WINDOW;
    final YamuxStreamFlow flow = flow(WINDOW, max);
    fastHalfWindow(flow);
    assertThat(flow.recvWindow()).isEqualTo(2 * WINDOW);
    // Doubling would give 4 x 256 KiB: capped at 3 x 256 KiB, the growth announced is 256 KiB.
    flow.receiveData(WINDOW);
    flow.consumed(WINDOW);
    now += RTT;
    assertThat(flow.nextWindowUpdate(RTT)).isEqualTo(WINDOW + WINDOW);
    assertThat(flow.recvWindow()).isEqualTo(max);
    assertThat(flow.recvCredit()).isEqualTo(max);

    flow.receiveData(max);
    flow.consumed(max);
    now += RTT;
    assertThat(flow.nextWindowUpdate(RTT)).isEqualTo(max);
    assertThat(flow.recvWindow()).isEqualTo(max);
  }

  @Test
  void nextWindowUpdate_shouldNeverGrow_whenTheMaximumIsTheInitialWindow() {
    final YamuxStreamFlow flow = flow(2 * WINDOW, 2 * WINDOW);
    flow.receiveData(WINDOW);
    flow.consumed(WINDOW);
    now += 1;
    assertThat(flow.nextWindowUpdate(RTT)).isEqualTo(WINDOW);
    assertThat(flow.recvWindow()).isEqualTo(2 * WINDOW);
  }

  @Test
  void nextWindowUpdate_shouldStopAtTheLargestWindowAllowed() {
    final int limit = YamuxConfig.MAX_WINDOW_LIMIT;
    final YamuxStreamFlow flow = flow(limit / 2, limit);
    flow.receiveData(limit / 4);
    flow.consumed(limit / 4);
    assertThat(flow.nextWindowUpdate(RTT)).isEqualTo(limit / 4 + limit / 2);
    assertThat(flow.recvWindow()).isEqualTo(limit);
    assertThat(flow.recvCredit()).isEqualTo(limit);
  }

  /** Half of the first window, consumed within a round trip: the window doubles. */
  private void fastHalfWindow(final YamuxStreamFlow flow) {
    flow.receiveData(WINDOW / 2);
    flow.consumed(WINDOW / 2);
    now += RTT;
    assertThat(flow.nextWindowUpdate(RTT)).isEqualTo(WINDOW / 2 + WINDOW);
  }
}
