package io.relaypinner.libp2p.mux.yamux;

/**
 * The four yamux frame types (hashicorp yamux {@code spec.md}, "Type Field", as adopted by libp2p
 * {@code yamux/README.md}). Any other type code is a protocol violation.
 */
public enum YamuxFrameType {
  /** Stream payload; the length field is the payload length. */
  DATA(0),
  /** Receive-window credit for a stream; the length field is the delta. */
  WINDOW_UPDATE(1),
  /** Session keep-alive and RTT probe on stream 0; the length field is an opaque value. */
  PING(2),
  /** Session termination on stream 0; the length field is the error code. */
  GO_AWAY(3);

  private static final YamuxFrameType[] BY_CODE = values();

  private final int code;

  YamuxFrameType(final int code) {
    this.code = code;
  }

  /** The type byte on the wire. */
  public int code() {
    return code;
  }

  /** The type for a wire code, or {@code null} if the code is not one of the four known types. */
  public static YamuxFrameType fromCode(final int code) {
    return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
  }
}
