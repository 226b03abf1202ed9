package io.relaypinner.libp2p.multistream;

import java.nio.charset.StandardCharsets;

/**
 * Constants and protocol-id rules of multistream-select 1.0 ({@code /multistream/1.0.0}), as
 * specified by {@code multiformats/multistream-select} {@code README.md} and {@code libp2p/specs}
 * {@code connections/README.md} ("multistream-select").
 *
 * <p>Every message is {@code uvarint(len) ‖ utf8 ‖ '\n'}, where {@code len} counts the newline and
 * is at most {@value #MAX_MESSAGE_LENGTH}: the limit go-multistream and js-libp2p
 * ({@code MAX_PROTOCOL_LENGTH}) enforce, so a longer protocol id could never be negotiated with
 * them anyway.
 */
public final class MultistreamProtocol {
  /** The header both sides send first. */
  public static final String PROTOCOL_ID = "/multistream/1.0.0";

  /** The responder's answer to a proposal it does not support. */
  public static final String NA = "na";

  /** A request for the responder's protocol list. */
  public static final String LS = "ls";

  /** The largest message, in bytes, including the trailing newline (not the length prefix). */
  public static final int MAX_MESSAGE_LENGTH = 1024;

  private MultistreamProtocol() {}

  /**
   * Checks that {@code protocol} can be proposed or echoed: not empty, no newline, not one of the
   * reserved words ({@code na}, {@code ls}, the header), and at most {@code MAX_MESSAGE_LENGTH - 1}
   * UTF-8 bytes.
   *
   * @return {@code protocol}
   * @throws IllegalArgumentException when it cannot
   */
  public static String checkProtocolId(final String protocol) {
    return checkProtocolId(protocol, MAX_MESSAGE_LENGTH);
  }

  static String checkProtocolId(final String protocol, final int maxMessageLength) {
    if (protocol == null || protocol.isEmpty()) {
      throw new IllegalArgumentException("protocol id must not be empty");
    }
    if (protocol.indexOf('\n') >= 0) {
      throw new IllegalArgumentException("protocol id must not contain a newline: " + protocol);
    }
    if (isReserved(protocol)) {
      throw new IllegalArgumentException("reserved multistream-select word: " + protocol);
    }
    final int length = protocol.getBytes(StandardCharsets.UTF_8).length + 1;
    if (length > maxMessageLength) {
      throw new IllegalArgumentException(
          "protocol id of " + length + " bytes with newline exceeds " + maxMessageLength);
    }
    return protocol;
  }

  /**
   * Whether a responder may echo {@code message} as a selected protocol, whatever its matcher
   * says: not empty, no newline, not a reserved word.
   */
  static boolean isSelectable(final String message) {
    return !message.isEmpty() && message.indexOf('\n') < 0 && !isReserved(message);
  }

  /** The words that are never a protocol. */
  static boolean isReserved(final String message) {
    return NA.equals(message) || LS.equals(message) || PROTOCOL_ID.equals(message);
  }
}
