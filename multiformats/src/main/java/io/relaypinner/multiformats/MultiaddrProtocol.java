package io.relaypinner.multiformats;

import java.util.Optional;

/**
 * The multiaddr protocols this project understands, with codes and value sizes exactly as in
 * {@code multiformats/multiaddr} {@code protocols.csv} (codes also in {@code
 * multiformats/multicodec} {@code table.csv}). Sizes are in bits: {@link #VARIABLE} means a value
 * with a varint length prefix, 0 means no value.
 *
 * <p>Text values: ip4 strict dotted quad; ip6 as in RFC 4291 §2.2 (printed compressed as in RFC
 * 5952 §4, without the mixed IPv4 notation, like the WHATWG URL serializer that JavaScript uses);
 * tcp/udp decimal ports 0 to 65535 without leading zeros; dns, dns4, dns6, dnsaddr, sni and ip6zone
 * as UTF-8 text, non-empty, at most 255 bytes, without {@code /} or control characters; p2p as a
 * {@link PeerId} (printed base58btc; parsed also from a libp2p-key CID; alias {@code ipfs});
 * certhash as a {@link Multihash} (printed as base64url multibase, parsed from any supported
 * multibase).
 */
public enum MultiaddrProtocol {
  IP4(4, "ip4", 32, ValueCodec.IP4),
  TCP(6, "tcp", 16, ValueCodec.PORT),
  UDP(273, "udp", 16, ValueCodec.PORT),
  IP6(41, "ip6", 128, ValueCodec.IP6),
  IP6ZONE(42, "ip6zone", MultiaddrProtocol.VARIABLE, ValueCodec.NAME),
  DNS(53, "dns", MultiaddrProtocol.VARIABLE, ValueCodec.NAME),
  DNS4(54, "dns4", MultiaddrProtocol.VARIABLE, ValueCodec.NAME),
  DNS6(55, "dns6", MultiaddrProtocol.VARIABLE, ValueCodec.NAME),
  DNSADDR(56, "dnsaddr", MultiaddrProtocol.VARIABLE, ValueCodec.NAME),
  WEBRTC_DIRECT(280, "webrtc-direct", 0, ValueCodec.NONE),
  WEBRTC(281, "webrtc", 0, ValueCodec.NONE),
  P2P_CIRCUIT(290, "p2p-circuit", 0, ValueCodec.NONE),
  P2P(421, "p2p", MultiaddrProtocol.VARIABLE, ValueCodec.PEER_ID, "ipfs"),
  HTTPS(443, "https", 0, ValueCodec.NONE),
  TLS(448, "tls", 0, ValueCodec.NONE),
  SNI(449, "sni", MultiaddrProtocol.VARIABLE, ValueCodec.NAME),
  NOISE(454, "noise", 0, ValueCodec.NONE),
  QUIC(460, "quic", 0, ValueCodec.NONE),
  QUIC_V1(461, "quic-v1", 0, ValueCodec.NONE),
  WEBTRANSPORT(465, "webtransport", 0, ValueCodec.NONE),
  CERTHASH(466, "certhash", MultiaddrProtocol.VARIABLE, ValueCodec.CERTHASH),
  WS(477, "ws", 0, ValueCodec.NONE),
  WSS(478, "wss", 0, ValueCodec.NONE),
  HTTP(480, "http", 0, ValueCodec.NONE);

  /** The size of a value with a varint length prefix ({@code V} in protocols.csv). */
  public static final int VARIABLE = -1;

  private final int code;
  private final String protocolName;
  private final int sizeBits;
  private final ValueCodec codec;
  private final String alias;

  MultiaddrProtocol(
      final int code, final String protocolName, final int sizeBits, final ValueCodec codec) {
    this(code, protocolName, sizeBits, codec, null);
  }

  MultiaddrProtocol(
      final int code, final String protocolName, final int sizeBits, final ValueCodec codec,
      final String alias) {
    this.code = code;
    this.protocolName = protocolName;
    this.sizeBits = sizeBits;
    this.codec = codec;
    this.alias = alias;
  }

  /** The protocol code, e.g. 6 for tcp. */
  public int code() {
    return code;
  }

  /** The name used in text, e.g. {@code "tcp"}. */
  public String protocolName() {
    return protocolName;
  }

  /** The value size in bits, 0 for no value, {@link #VARIABLE} for a length-prefixed value. */
  public int sizeBits() {
    return sizeBits;
  }

  /** Whether the protocol carries a value. */
  public boolean hasValue() {
    return sizeBits != 0;
  }

  /** Whether the value has a varint length prefix. */
  public boolean isVariable() {
    return sizeBits == VARIABLE;
  }

  /** Another name accepted when parsing text ({@code ipfs} for p2p). */
  public Optional<String> alias() {
    return Optional.ofNullable(alias);
  }

  ValueCodec codec() {
    return codec;
  }

  /** The protocol with this code. */
  public static Optional<MultiaddrProtocol> forCode(final long code) {
    for (final MultiaddrProtocol p : values()) {
      if (p.code == code) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /** The protocol with this name or alias. */
  public static Optional<MultiaddrProtocol> forName(final String name) {
    for (final MultiaddrProtocol p : values()) {
      if (p.protocolName.equals(name) || name.equals(p.alias)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }
}
