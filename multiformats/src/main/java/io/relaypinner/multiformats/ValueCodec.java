package io.relaypinner.multiformats;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Text and binary forms of one kind of multiaddr value. A closed set: one implementation per kind
 * in {@link MultiaddrProtocol}. Failures are {@link MultiformatException}s whose message says what
 * is wrong with the value; the caller adds the protocol and position.
 */
sealed interface ValueCodec {
  NoValue NONE = new NoValue();
  Ip4Value IP4 = new Ip4Value();
  Ip6Value IP6 = new Ip6Value();
  PortValue PORT = new PortValue();
  NameValue NAME = new NameValue();
  PeerIdValue PEER_ID = new PeerIdValue();
  CertHashValue CERTHASH = new CertHashValue();

  /** Text to binary; the text has no {@code /}. */
  byte[] parse(String text);

  /** Binary (already checked) to text. */
  String print(byte[] value);

  /** Checks a binary value of the right size. */
  void check(byte[] value);

  /** Protocols without a value. */
  record NoValue() implements ValueCodec {
    @Override
    public byte[] parse(final String text) {
      throw new MultiformatException("takes no value");
    }

    @Override
    public String print(final byte[] value) {
      return "";
    }

    @Override
    public void check(final byte[] value) {
      if (value.length != 0) {
        throw new MultiformatException("takes no value");
      }
    }
  }

  /** IPv4 address, strict dotted quad: four decimal 0-255 without leading zeros. */
  record Ip4Value() implements ValueCodec {
    @Override
    public byte[] parse(final String text) {
      final byte[] out = new byte[4];
      int part = 0;
      int i = 0;
      final int n = text.length();
      while (true) {
        final int start = i;
        int value = 0;
        while (i < n && i - start < 4 && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
          value = value * 10 + (text.charAt(i) - '0');
          i++;
        }
        final int digits = i - start;
        if (digits == 0 || digits > 3 || value > 255 || (digits > 1 && text.charAt(start) == '0')) {
          throw invalid(text);
        }
        out[part++] = (byte) value;
        if (part == 4) {
          if (i != n) {
            throw invalid(text);
          }
          return out;
        }
        if (i >= n || text.charAt(i) != '.') {
          throw invalid(text);
        }
        i++;
      }
    }

    private static MultiformatException invalid(final String text) {
      return new MultiformatException(
          "invalid IPv4 address '" + Chars.abbreviate(text, 64)
              + "' (expected four decimal numbers 0-255, no leading zeros)");
    }

    @Override
    public String print(final byte[] value) {
      return (value[0] & 0xFF) + "." + (value[1] & 0xFF) + "." + (value[2] & 0xFF) + "."
          + (value[3] & 0xFF);
    }

    @Override
    public void check(final byte[] value) {
      // Any 4 bytes are an address.
    }
  }

  /** IPv6 address, RFC 4291 §2.2 text (with optional trailing dotted quad), no zone. */
  record Ip6Value() implements ValueCodec {
    private static final int MAX_TEXT = 45;

    @Override
    public byte[] parse(final String text) {
      if (text.length() > MAX_TEXT) {
        throw invalid(text, "longer than " + MAX_TEXT + " characters");
      }
      if (text.indexOf('%') >= 0) {
        throw invalid(text, "zones go in a separate /ip6zone component");
      }
      final int gap = text.indexOf("::");
      if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
        throw invalid(text, "more than one '::'");
      }
      final int[] groups = new int[8];
      final int headCount;
      final int tailCount;
      final int[] tail = new int[8];
      if (gap < 0) {
        headCount = parseGroups(text, text, groups, true);
        tailCount = 0;
        if (headCount != 8) {
          throw invalid(text, "expected 8 groups, found " + headCount);
        }
      } else {
        headCount = gap == 0 ? 0 : parseGroups(text, text.substring(0, gap), groups, false);
        final String rest = text.substring(gap + 2);
        tailCount = rest.isEmpty() ? 0 : parseGroups(text, rest, tail, true);
        if (headCount + tailCount > 7) {
          throw invalid(text, "'::' must stand for at least one group");
        }
        System.arraycopy(tail, 0, groups, 8 - tailCount, tailCount);
      }
      final byte[] out = new byte[16];
      for (int g = 0; g < 8; g++) {
        out[2 * g] = (byte) (groups[g] >>> 8);
        out[2 * g + 1] = (byte) groups[g];
      }
      return out;
    }

    /**
     * Parses {@code a:b:c} into {@code out} and returns the number of groups; the last part may be
     * a dotted quad (two groups) when {@code allowV4}, i.e. when it ends the address.
     */
    private static int parseGroups(
        final String whole, final String part, final int[] out, final boolean allowV4) {
      int count = 0;
      int i = 0;
      final int n = part.length();
      while (true) {
        final int colon = part.indexOf(':', i);
        final int end = colon < 0 ? n : colon;
        final String group = part.substring(i, end);
        if (allowV4 && colon < 0 && group.indexOf('.') >= 0) {
          if (count > 6) {
            throw invalid(whole, "too many groups");
          }
          final byte[] v4 = IP4.parse(group);
          out[count++] = ((v4[0] & 0xFF) << 8) | (v4[1] & 0xFF);
          out[count++] = ((v4[2] & 0xFF) << 8) | (v4[3] & 0xFF);
          return count;
        }
        if (group.isEmpty() || group.length() > 4) {
          throw invalid(whole, "group '" + group + "' must be 1 to 4 hex digits");
        }
        int value = 0;
        for (int k = 0; k < group.length(); k++) {
          final int d = Character.digit(group.charAt(k), 16);
          if (d < 0 || group.charAt(k) > 'f') {
            throw invalid(whole, "bad hex digit " + Chars.quote(group.charAt(k)));
          }
          value = (value << 4) | d;
        }
        if (count >= 8) {
          throw invalid(whole, "too many groups");
        }
        out[count++] = value;
        if (colon < 0) {
          return count;
        }
        i = colon + 1;
      }
    }

    private static MultiformatException invalid(final String text, final String why) {
      return new MultiformatException(
          "invalid IPv6 address '" + Chars.abbreviate(text, 64) + "': " + why);
    }

    @Override
    public String print(final byte[] value) {
      final int[] groups = new int[8];
      for (int g = 0; g < 8; g++) {
        groups[g] = ((value[2 * g] & 0xFF) << 8) | (value[2 * g + 1] & 0xFF);
      }
      // RFC 5952 §4.2: compress the first longest run of two or more zero groups.
      int bestStart = -1;
      int bestLength = 1;
      for (int g = 0; g < 8; ) {
        if (groups[g] != 0) {
          g++;
          continue;
        }
        int end = g;
        while (end < 8 && groups[end] == 0) {
          end++;
        }
        if (end - g > bestLength) {
          bestStart = g;
          bestLength = end - g;
        }
        g = end;
      }
      final StringBuilder sb = new StringBuilder(39);
      for (int g = 0; g < 8; g++) {
        if (g == bestStart) {
          sb.append("::");
          g += bestLength - 1;
          continue;
        }
        if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
          sb.append(':');
        }
        sb.append(Integer.toHexString(groups[g]));
      }
      return sb.toString();
    }

    @Override
    public void check(final byte[] value) {
      // Any 16 bytes are an address.
    }
  }

  /** TCP/UDP port: decimal 0-65535, no sign, no leading zeros; 2 bytes big-endian. */
  record PortValue() implements ValueCodec {
    @Override
    public byte[] parse(final String text) {
      final int n = text.length();
      boolean ok = n >= 1 && n <= 5 && !(n > 1 && text.charAt(0) == '0');
      int value = 0;
      for (int i = 0; ok && i < n; i++) {
        final char c = text.charAt(i);
        ok = c >= '0' && c <= '9';
        value = value * 10 + (c - '0');
      }
      if (!ok || value > 0xFFFF) {
        throw new MultiformatException(
            "invalid port '" + Chars.abbreviate(text, 64)
                + "' (expected a decimal number 0-65535, no leading zeros)");
      }
      return new byte[] {(byte) (value >>> 8), (byte) value};
    }

    @Override
    public String print(final byte[] value) {
      return Integer.toString(((value[0] & 0xFF) << 8) | (value[1] & 0xFF));
    }

    @Override
    public void check(final byte[] value) {
      // Any 2 bytes are a port.
    }
  }

  /**
   * Names (dns*, sni, ip6zone): UTF-8, non-empty, at most 255 bytes (the DNS limit), no
   * {@code /} (it would break the text form) and no control characters (log injection).
   */
  record NameValue() implements ValueCodec {
    private static final int MAX_BYTES = 255;

    @Override
    public byte[] parse(final String text) {
      checkChars(text);
      final byte[] bytes;
      try {
        final ByteBuffer buffer = StandardCharsets.UTF_8.newEncoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .encode(CharBuffer.wrap(text));
        bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
      } catch (final CharacterCodingException e) {
        throw new MultiformatException("name is not valid Unicode (unpaired surrogate)", e);
      }
      checkLength(bytes.length);
      return bytes;
    }

    @Override
    public String print(final byte[] value) {
      return new String(value, StandardCharsets.UTF_8);
    }

    @Override
    public void check(final byte[] value) {
      checkLength(value.length);
      final String text;
      try {
        text = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(value))
            .toString();
      } catch (final CharacterCodingException e) {
        throw new MultiformatException("name is not valid UTF-8", e);
      }
      checkChars(text);
    }

    private static void checkLength(final int length) {
      if (length == 0) {
        throw new MultiformatException("empty name");
      }
      if (length > MAX_BYTES) {
        throw new MultiformatException(
            "name of " + length + " bytes exceeds the limit of " + MAX_BYTES);
      }
    }

    private static void checkChars(final String text) {
      for (int i = 0; i < text.length(); i++) {
        final char c = text.charAt(i);
        if (c == '/' || c < 0x20 || c == 0x7F) {
          throw new MultiformatException(
              "name contains " + Chars.quote(c) + " at position " + i);
        }
      }
    }
  }

  /** Peer ID: binary multihash, text base58btc (or a libp2p-key CID when parsing). */
  record PeerIdValue() implements ValueCodec {
    @Override
    public byte[] parse(final String text) {
      return PeerId.parse(text).bytes();
    }

    @Override
    public String print(final byte[] value) {
      return Base58.encode(value);
    }

    @Override
    public void check(final byte[] value) {
      PeerId.fromBytes(value);
    }
  }

  /** Certificate hash: binary multihash, text multibase (printed base64url). */
  record CertHashValue() implements ValueCodec {
    @Override
    public byte[] parse(final String text) {
      final byte[] bytes = Multibase.decode(text);
      Multihash.decode(bytes);
      return bytes;
    }

    @Override
    public String print(final byte[] value) {
      return Multibase.encode(Multibase.Base.BASE64URL, value);
    }

    @Override
    public void check(final byte[] value) {
      Multihash.decode(value);
    }
  }
}
