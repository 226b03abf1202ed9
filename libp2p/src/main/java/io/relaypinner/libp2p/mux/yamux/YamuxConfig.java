package io.relaypinner.libp2p.mux.yamux;

import io.netty.channel.WriteBufferWaterMark;
import java.time.Duration;
import java.util.Objects;

/**
 * Limits and tuning of a yamux session ({@code /yamux/1.0.0}); immutable. {@link #DEFAULT} suits
 * js-libp2p peers (yamux 7.x and 8.x); {@link #builder()} validates every value.
 *
 * <p>Memory bounds that follow from these values, per stream: inbound bytes buffered for a stream
 * plus the credit granted to the peer never exceed that stream's receive window, which starts at
 * {@link #initialStreamWindow()} and grows (only while the application keeps reading faster than
 * the window drains) up to {@link #maxStreamWindow()}; outbound bytes queued on a stream channel
 * are capped at {@link #maxStreamWriteBuffer()}.
 */
public final class YamuxConfig {
  /** The window both sides assume for a new stream before any update (the spec's 256 KiB). */
  public static final int SPEC_INITIAL_WINDOW = 256 * 1024;

  /** Upper bound for {@link #maxStreamWindow()}: a window is tracked in an {@code int}. */
  public static final int MAX_WINDOW_LIMIT = 1 << 30;

  /** Defaults: see each builder method. */
  public static final YamuxConfig DEFAULT = builder().build();

  private final int maxInboundStreams;
  private final int maxOutboundStreams;
  private final int maxAckBacklog;
  private final int initialStreamWindow;
  private final int maxStreamWindow;
  private final int maxFramePayload;
  private final WriteBufferWaterMark streamWriteBufferWaterMark;
  private final long maxStreamWriteBuffer;
  private final boolean streamAllowHalfClosure;
  private final Duration keepAliveInterval;
  private final Duration keepAliveTimeout;
  private final Duration streamLingerTimeout;
  private final int maxPendingPingReplies;

  private YamuxConfig(final Builder b) {
    this.maxInboundStreams = b.maxInboundStreams;
    this.maxOutboundStreams = b.maxOutboundStreams;
    this.maxAckBacklog = b.maxAckBacklog;
    this.initialStreamWindow = b.initialStreamWindow;
    this.maxStreamWindow = b.maxStreamWindow;
    this.maxFramePayload = b.maxFramePayload;
    this.streamWriteBufferWaterMark = b.streamWriteBufferWaterMark;
    this.maxStreamWriteBuffer = b.maxStreamWriteBuffer;
    this.streamAllowHalfClosure = b.streamAllowHalfClosure;
    this.keepAliveInterval = b.keepAliveInterval;
    this.keepAliveTimeout = b.keepAliveTimeout;
    this.streamLingerTimeout = b.streamLingerTimeout;
    this.maxPendingPingReplies = b.maxPendingPingReplies;
  }

  /** A builder holding the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this config's values. */
  public Builder toBuilder() {
    final Builder b = new Builder();
    b.maxInboundStreams = maxInboundStreams;
    b.maxOutboundStreams = maxOutboundStreams;
    b.maxAckBacklog = maxAckBacklog;
    b.initialStreamWindow = initialStreamWindow;
    b.maxStreamWindow = maxStreamWindow;
    b.maxFramePayload = maxFramePayload;
    b.streamWriteBufferWaterMark = streamWriteBufferWaterMark;
    b.maxStreamWriteBuffer = maxStreamWriteBuffer;
    b.streamAllowHalfClosure = streamAllowHalfClosure;
    b.keepAliveInterval = keepAliveInterval;
    b.keepAliveTimeout = keepAliveTimeout;
    b.streamLingerTimeout = streamLingerTimeout;
    b.maxPendingPingReplies = maxPendingPingReplies;
    return b;
  }

  /** Streams the remote may have open at once; a SYN beyond it is answered with RST. */
  public int maxInboundStreams() {
    return maxInboundStreams;
  }

  /** Streams we may have open at once; {@code newStream} fails beyond it. */
  public int maxOutboundStreams() {
    return maxOutboundStreams;
  }

  /** Streams we opened that the remote has not acknowledged yet; {@code newStream} fails beyond. */
  public int maxAckBacklog() {
    return maxAckBacklog;
  }

  /** Receive window announced for every new stream (in its SYN or ACK). */
  public int initialStreamWindow() {
    return initialStreamWindow;
  }

  /** Largest receive window a stream may grow to; also the largest DATA frame accepted. */
  public int maxStreamWindow() {
    return maxStreamWindow;
  }

  /** Largest DATA payload we send in one frame. */
  public int maxFramePayload() {
    return maxFramePayload;
  }

  /** Writability water marks of each stream channel's outbound queue. */
  public WriteBufferWaterMark streamWriteBufferWaterMark() {
    return streamWriteBufferWaterMark;
  }

  /** Hard cap on bytes queued on one stream channel; a write beyond it fails. */
  public long maxStreamWriteBuffer() {
    return maxStreamWriteBuffer;
  }

  /** Initial {@code ALLOW_HALF_CLOSURE} of stream channels. */
  public boolean streamAllowHalfClosure() {
    return streamAllowHalfClosure;
  }

  /** Interval between keep-alive pings; {@link Duration#ZERO} disables them. */
  public Duration keepAliveInterval() {
    return keepAliveInterval;
  }

  /** How long a ping may stay unanswered before the connection is closed as dead. */
  public Duration keepAliveTimeout() {
    return keepAliveTimeout;
  }

  /** How long a stream closed locally waits for the remote's FIN before it is reset. */
  public Duration streamLingerTimeout() {
    return streamLingerTimeout;
  }

  /** Ping answers the remote may leave unread in our outbound path before it is cut off. */
  public int maxPendingPingReplies() {
    return maxPendingPingReplies;
  }

  @Override
  public String toString() {
    return "YamuxConfig{maxInboundStreams="
        + maxInboundStreams
        + ", maxOutboundStreams="
        + maxOutboundStreams
        + ", maxAckBacklog="
        + maxAckBacklog
        + ", initialStreamWindow="
        + initialStreamWindow
        + ", maxStreamWindow="
        + maxStreamWindow
        + ", maxFramePayload="
        + maxFramePayload
        + ", streamWriteBufferWaterMark="
        + streamWriteBufferWaterMark
        + ", maxStreamWriteBuffer="
        + maxStreamWriteBuffer
        + ", streamAllowHalfClosure="
        + streamAllowHalfClosure
        + ", keepAliveInterval="
        + keepAliveInterval
        + ", keepAliveTimeout="
        + keepAliveTimeout
        + ", streamLingerTimeout="
        + streamLingerTimeout
        + ", maxPendingPingReplies="
        + maxPendingPingReplies
        + '}';
  }

  /** Validating builder; every setter rejects out-of-range values at once. */
  public static final class Builder {
    private int maxInboundStreams = 1024;
    private int maxOutboundStreams = 1024;
    private int maxAckBacklog = 256;
    private int initialStreamWindow = SPEC_INITIAL_WINDOW;
    private int maxStreamWindow = 16 * 1024 * 1024;
    private int maxFramePayload = 64 * 1024;
    private WriteBufferWaterMark streamWriteBufferWaterMark =
        new WriteBufferWaterMark(128 * 1024, 256 * 1024);
    private long maxStreamWriteBuffer = 16L * 1024 * 1024;
    private boolean streamAllowHalfClosure = true;
    private Duration keepAliveInterval = Duration.ofSeconds(30);
    private Duration keepAliveTimeout = Duration.ofSeconds(20);
    private Duration streamLingerTimeout = Duration.ofSeconds(30);
    private int maxPendingPingReplies = 64;

    private Builder() {}

    /** Default 1024 (js-libp2p allows 1000); 0 refuses every inbound stream. */
    public Builder maxInboundStreams(final int value) {
      this.maxInboundStreams = requireAtLeast("maxInboundStreams", value, 0);
      return this;
    }

    /** Default 1024. */
    public Builder maxOutboundStreams(final int value) {
      this.maxOutboundStreams = requireAtLeast("maxOutboundStreams", value, 0);
      return this;
    }

    /** Default 256, the bound the libp2p yamux spec recommends. */
    public Builder maxAckBacklog(final int value) {
      this.maxAckBacklog = requireAtLeast("maxAckBacklog", value, 1);
      return this;
    }

    /** Default and minimum 256 KiB: peers assume that much before any update, we cannot shrink. */
    public Builder initialStreamWindow(final int value) {
      this.initialStreamWindow = requireAtLeast("initialStreamWindow", value, SPEC_INITIAL_WINDOW);
      if (value > MAX_WINDOW_LIMIT) {
        throw new IllegalArgumentException("initialStreamWindow above " + MAX_WINDOW_LIMIT);
      }
      return this;
    }

    /** Default 16 MiB (as js-libp2p), at most 1 GiB; must be at least the initial window. */
    public Builder maxStreamWindow(final int value) {
      this.maxStreamWindow = requireAtLeast("maxStreamWindow", value, SPEC_INITIAL_WINDOW);
      if (value > MAX_WINDOW_LIMIT) {
        throw new IllegalArgumentException("maxStreamWindow above " + MAX_WINDOW_LIMIT);
      }
      return this;
    }

    /** Default 64 KiB; between 1 KiB and 16 MiB. */
    public Builder maxFramePayload(final int value) {
      this.maxFramePayload = requireAtLeast("maxFramePayload", value, 1024);
      if (value > 16 * 1024 * 1024) {
        throw new IllegalArgumentException("maxFramePayload above 16 MiB: " + value);
      }
      return this;
    }

    /** Default 128 KiB low / 256 KiB high. */
    public Builder streamWriteBufferWaterMark(final WriteBufferWaterMark value) {
      this.streamWriteBufferWaterMark = Objects.requireNonNull(value, "streamWriteBufferWaterMark");
      return this;
    }

    /** Default 16 MiB; must be at least the high water mark. */
    public Builder maxStreamWriteBuffer(final long value) {
      if (value < 1) {
        throw new IllegalArgumentException("maxStreamWriteBuffer must be > 0: " + value);
      }
      this.maxStreamWriteBuffer = value;
      return this;
    }

    /**
     * Default {@code true}: a received FIN half-closes the stream channel instead of closing it.
     */
    public Builder streamAllowHalfClosure(final boolean value) {
      this.streamAllowHalfClosure = value;
      return this;
    }

    /** Default 30 s (as js-libp2p); {@link Duration#ZERO} disables keep-alive pings. */
    public Builder keepAliveInterval(final Duration value) {
      Objects.requireNonNull(value, "keepAliveInterval");
      if (value.isNegative()) {
        throw new IllegalArgumentException("keepAliveInterval must not be negative: " + value);
      }
      this.keepAliveInterval = value;
      return this;
    }

    /** Default 20 s. */
    public Builder keepAliveTimeout(final Duration value) {
      this.keepAliveTimeout = requirePositive("keepAliveTimeout", value);
      return this;
    }

    /** Default 30 s. */
    public Builder streamLingerTimeout(final Duration value) {
      this.streamLingerTimeout = requirePositive("streamLingerTimeout", value);
      return this;
    }

    /** Default 64; a legitimate peer has at most one ping outstanding. */
    public Builder maxPendingPingReplies(final int value) {
      this.maxPendingPingReplies = requireAtLeast("maxPendingPingReplies", value, 1);
      return this;
    }

    /** Checks the values that depend on each other and builds the config. */
    public YamuxConfig build() {
      if (maxStreamWindow < initialStreamWindow) {
        throw new IllegalArgumentException(
            "maxStreamWindow " + maxStreamWindow + " < initialStreamWindow " + initialStreamWindow);
      }
      if (maxStreamWriteBuffer < streamWriteBufferWaterMark.high()) {
        throw new IllegalArgumentException(
            "maxStreamWriteBuffer "
                + maxStreamWriteBuffer
                + " < high water mark "
                + streamWriteBufferWaterMark.high());
      }
      return new YamuxConfig(this);
    }

    private static int requireAtLeast(final String name, final int value, final int min) {
      if (value < min) {
        throw new IllegalArgumentException(name + " must be >= " + min + ": " + value);
      }
      return value;
    }

    private static Duration requirePositive(final String name, final Duration value) {
      Objects.requireNonNull(value, name);
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(name + " must be positive: " + value);
      }
      return value;
    }
  }
}
