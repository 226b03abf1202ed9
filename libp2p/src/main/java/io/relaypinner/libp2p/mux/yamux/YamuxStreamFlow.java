package io.relaypinner.libp2p.mux.yamux;

import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * One yamux stream's flow control ({@code /yamux/1.0.0}, hashicorp yamux {@code spec.md}, "Flow
 * Control"): both windows, their counters and every rule over them, in one place and without Netty
 * types. The session ({@link YamuxHandler}) reports the frames that arrive and sends the
 * WINDOW_UPDATEs this object asks for; the stream channel ({@link YamuxStreamChannel}) asks how
 * much it may send and reports what its application consumed. Netty's HTTP/2 flow controllers
 * split the same way ({@code DefaultHttp2RemoteFlowController} for sending, {@code
 * DefaultHttp2LocalFlowController} for receiving, with the state per stream behind their API).
 *
 * <p><b>Sending.</b> Both sides assume a 256 KiB window for a new stream ({@link
 * YamuxConfig#SPEC_INITIAL_WINDOW}); the remote's WINDOW_UPDATEs (the one on its SYN or ACK
 * included) add to it and each DATA payload byte we send takes from it. A write waits while the
 * window is empty. An update taking the window past 2^32-1 (the largest value a frame can carry)
 * is a protocol violation.
 *
 * <p><b>Receiving.</b> The receive window starts at the configured initial window, announced to the
 * remote by the SYN or ACK ({@link #initialWindowIncrement()}). The remote may send as many DATA
 * bytes as the credit it holds: a DATA header beyond it is a protocol violation. Bytes received
 * count as unconsumed until the application has read them (or they were dropped); credit plus
 * unconsumed never exceeds the window, which bounds what a stream buffers. Credit is returned only
 * for consumed bytes, in one WINDOW_UPDATE once half the window is free, so a reader that stops
 * stops the remote at the window.
 *
 * <p><b>Auto-tuning.</b> When half the window was used within four round trips of the last update
 * (or of the stream's start), the window, not the reader, limits the stream: the window doubles,
 * up to the configured maximum, and the same WINDOW_UPDATE announces the growth. js-libp2p tunes
 * its own windows the same way. Without a measured round trip the window does not grow.
 *
 * <p>Not thread-safe: used on the connection's event loop only.
 */
final class YamuxStreamFlow {
  private final int streamId;
  private final int initialWindow;
  private final int maxWindow;
  private final LongSupplier nanoTime;

  // Send side: what the remote still accepts; up to 2^32-1.
  private long sendWindow = YamuxConfig.SPEC_INITIAL_WINDOW;

  // Receive side: recvCredit + unconsumed never exceeds recvWindow.
  private int recvWindow;
  private long recvCredit;
  private long unconsumed;
  private long epochNanos;

  /**
   * @param streamId the stream, for the messages of violations (an unsigned 32-bit value)
   * @param initialWindow the receive window a new stream starts with; at least 256 KiB
   * @param maxWindow the largest receive window auto-tuning may grow to; at least {@code
   *     initialWindow}
   * @param nanoTime a monotonic clock in nanoseconds (the event loop's ticker); the stream starts
   *     now
   */
  YamuxStreamFlow(
      final int streamId,
      final int initialWindow,
      final int maxWindow,
      final LongSupplier nanoTime) {
    if (initialWindow < YamuxConfig.SPEC_INITIAL_WINDOW || maxWindow < initialWindow) {
      throw new IllegalArgumentException(
          "windows need "
              + YamuxConfig.SPEC_INITIAL_WINDOW
              + " <= initialWindow ("
              + initialWindow
              + ") <= maxWindow ("
              + maxWindow
              + ")");
    }
    this.streamId = streamId;
    this.initialWindow = initialWindow;
    this.maxWindow = maxWindow;
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.recvWindow = initialWindow;
    this.recvCredit = initialWindow;
    this.epochNanos = nanoTime.getAsLong();
  }

  /**
   * The increment our SYN or ACK carries: the receive window beyond the 256 KiB the remote assumes
   * for a new stream (0 with the spec's window).
   */
  long initialWindowIncrement() {
    return initialWindow - (long) YamuxConfig.SPEC_INITIAL_WINDOW;
  }

  // ---- sending ----

  /** The bytes the remote still accepts on this stream. */
  long sendWindow() {
    return sendWindow;
  }

  /** Whether a DATA frame may go now; if not, writes wait for a WINDOW_UPDATE. */
  boolean canSend() {
    return sendWindow > 0;
  }

  /**
   * Takes the payload of one DATA frame about to be written from the send window.
   *
   * @param wanted the bytes the writer has for this frame
   * @return the bytes it may send: {@code wanted}, or less (0 when the window is empty)
   */
  int takeSendWindow(final int wanted) {
    final int n = (int) Math.min(wanted, sendWindow);
    sendWindow -= n;
    return n;
  }

  /**
   * The remote granted {@code increment} more bytes (a WINDOW_UPDATE's length).
   *
   * @throws ProtocolViolationException if the window would exceed 2^32-1; the window is unchanged
   */
  void incrementSendWindow(final long increment) {
    final long window = sendWindow + increment;
    if (window > YamuxFrame.MAX_LENGTH) {
      throw new ProtocolViolationException(
          "yamux WINDOW_UPDATE takes the send window of stream "
              + Integer.toUnsignedString(streamId)
              + " to "
              + window
              + ", beyond 2^32-1");
    }
    sendWindow = window;
  }

  // ---- receiving ----

  /** The current receive window: what the remote may have in flight plus what we buffer. */
  int recvWindow() {
    return recvWindow;
  }

  /** The bytes the remote may still send before it needs a WINDOW_UPDATE. */
  long recvCredit() {
    return recvCredit;
  }

  /** Bytes received (or announced by a DATA header) that the application has not consumed. */
  long unconsumed() {
    return unconsumed;
  }

  /**
   * A DATA header announced {@code length} payload bytes for this stream: they use the remote's
   * credit and count as unconsumed until {@link #consumed}.
   *
   * @throws ProtocolViolationException if they exceed the credit; nothing is counted then
   */
  void receiveData(final long length) {
    if (length > recvCredit) {
      throw new ProtocolViolationException(
          "yamux DATA frame of "
              + length
              + " bytes exceeds the receive window of "
              + recvCredit
              + " on stream "
              + Integer.toUnsignedString(streamId));
    }
    recvCredit -= length;
    unconsumed += length;
  }

  /** {@code n} received bytes left the stream: read by the application, or dropped. */
  void consumed(final long n) {
    unconsumed -= n;
  }

  /**
   * The WINDOW_UPDATE due now, if any: once at least half the window is neither held by the remote
   * as credit nor unconsumed, all of it is granted back (plus the growth when auto-tuning doubles
   * the window). The grant counts as sent: the caller must send it.
   *
   * @param rttNanos the connection's last measured round trip, or a value {@code <= 0} if unknown
   * @return the increment to send, or 0 when none is due
   */
  long nextWindowUpdate(final long rttNanos) {
    long increment = recvWindow - recvCredit - unconsumed;
    if (increment < recvWindow / 2) {
      return 0;
    }
    final long now = nanoTime.getAsLong();
    if (rttNanos > 0 && recvWindow < maxWindow && now - epochNanos < 4 * rttNanos) {
      // Half a window was used within four round trips: the window, not the reader, limits.
      final int grown = (int) Math.min(2L * recvWindow, maxWindow);
      increment += grown - recvWindow;
      recvWindow = grown;
    }
    epochNanos = now;
    recvCredit += increment;
    return increment;
  }

  @Override
  public String toString() {
    return "YamuxStreamFlow{stream="
        + Integer.toUnsignedString(streamId)
        + ", sendWindow="
        + sendWindow
        + ", recvWindow="
        + recvWindow
        + ", recvCredit="
        + recvCredit
        + ", unconsumed="
        + unconsumed
        + "}";
  }
}
