package io.relaypinner.multiformats;

import java.util.Arrays;
import java.util.Objects;

/**
 * One {@code /protocol/value} part of a {@link Multiaddr} ({@code multiformats/multiaddr}
 * {@code README.md}, "Specification"): binary {@code varint(code) ‖ value}, where a variable value
 * has its own varint length prefix. The value is kept in binary form and has been checked for its
 * protocol; the array is copied in and out. Equality is by protocol and value bytes.
 */
public record MultiaddrComponent(MultiaddrProtocol protocol, byte[] value) {
  /**
   * Validates and copies.
   *
   * @throws MultiformatException when the value has the wrong size or content for the protocol
   */
  public MultiaddrComponent {
    Objects.requireNonNull(protocol, "protocol");
    if (protocol.isVariable()) {
      if (value.length > Multiaddr.MAX_BYTES) {
        throw new MultiformatException(
            "/" + protocol.protocolName() + " value of " + value.length
                + " bytes exceeds the limit of " + Multiaddr.MAX_BYTES);
      }
    } else if (value.length * 8 != protocol.sizeBits()) {
      throw new MultiformatException(
          "/" + protocol.protocolName() + " value must be " + protocol.sizeBits() / 8
              + " bytes, got " + value.length);
    }
    try {
      protocol.codec().check(value);
    } catch (final MultiformatException e) {
      throw new MultiformatException(
          "invalid /" + protocol.protocolName() + " value: " + e.getMessage(), e);
    }
    value = value.clone();
  }

  /** A component without a value, e.g. {@code /tls}. */
  public static MultiaddrComponent of(final MultiaddrProtocol protocol) {
    if (protocol.hasValue()) {
      throw new MultiformatException("/" + protocol.protocolName() + " needs a value");
    }
    return new MultiaddrComponent(protocol, new byte[0]);
  }

  /**
   * A component from the text form of its value, e.g. {@code of(TCP, "443")}.
   *
   * @throws MultiformatException when the value is not valid for the protocol
   */
  public static MultiaddrComponent of(final MultiaddrProtocol protocol, final String value) {
    if (!protocol.hasValue()) {
      throw new MultiformatException("/" + protocol.protocolName() + " takes no value");
    }
    final byte[] bytes;
    try {
      bytes = protocol.codec().parse(value);
    } catch (final MultiformatException e) {
      throw new MultiformatException(
          "invalid /" + protocol.protocolName() + " value: " + e.getMessage(), e);
    }
    return new MultiaddrComponent(protocol, bytes);
  }

  /** A {@code /p2p/<peer id>} component. */
  public static MultiaddrComponent p2p(final PeerId peerId) {
    return new MultiaddrComponent(MultiaddrProtocol.P2P, peerId.bytes());
  }

  /** A copy of the binary value (empty for protocols without one). */
  @Override
  public byte[] value() {
    return value.clone();
  }

  /** The text form of the value, e.g. {@code "443"}; empty for protocols without a value. */
  public String valueText() {
    return protocol.codec().print(value);
  }

  /** For tcp and udp: the port number. */
  public int port() {
    if (protocol != MultiaddrProtocol.TCP && protocol != MultiaddrProtocol.UDP) {
      throw new IllegalStateException("/" + protocol.protocolName() + " has no port");
    }
    return ((value[0] & 0xFF) << 8) | (value[1] & 0xFF);
  }

  /** For p2p: the peer ID. */
  public PeerId peerId() {
    if (protocol != MultiaddrProtocol.P2P) {
      throw new IllegalStateException("/" + protocol.protocolName() + " has no peer ID");
    }
    return PeerId.fromBytes(value);
  }

  /** The length of the binary form. */
  public int encodedLength() {
    final int length = Uvarint.size(protocol.code()) + value.length;
    return protocol.isVariable() ? length + Uvarint.size(value.length) : length;
  }

  /** The binary form: {@code varint(code)}, the length for variable values, the value. */
  public byte[] bytes() {
    final byte[] out = new byte[encodedLength()];
    write(out, 0);
    return out;
  }

  /** Writes the binary form at {@code offset}; returns the number of bytes written. */
  int write(final byte[] dst, final int offset) {
    int pos = offset + Uvarint.write(protocol.code(), dst, offset);
    if (protocol.isVariable()) {
      pos += Uvarint.write(value.length, dst, pos);
    }
    System.arraycopy(value, 0, dst, pos, value.length);
    return pos + value.length - offset;
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof MultiaddrComponent other && other.protocol == protocol
        && Arrays.equals(other.value, value);
  }

  @Override
  public int hashCode() {
    return 31 * protocol.code() + Arrays.hashCode(value);
  }

  /** The text form, e.g. {@code /tcp/443} or {@code /tls}. */
  @Override
  public String toString() {
    return protocol.hasValue()
        ? "/" + protocol.protocolName() + "/" + valueText()
        : "/" + protocol.protocolName();
  }
}
