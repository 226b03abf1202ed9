package io.relaypinner.common.budget;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * An address range in CIDR notation ({@code 10.0.0.0/8}, {@code fd00::/8}) or one address
 * ({@code 192.0.2.1}, {@code ::1}). Parsed from numeric text only: never a DNS lookup. An
 * IPv4-mapped IPv6 address matches as its IPv4 address.
 */
public final class IpRange {
  private final byte[] network;
  private final int bits;
  private final String text;

  private IpRange(final byte[] network, final int bits, final String text) {
    this.network = network;
    this.bits = bits;
    this.text = text;
  }

  /**
   * Parses {@code text}.
   *
   * @throws IllegalArgumentException when it is not a numeric address with an optional prefix
   *     length that fits it
   */
  public static IpRange parse(final String text) {
    final int slash = text.indexOf('/');
    final String host = slash < 0 ? text : text.substring(0, slash);
    final byte[] address = numeric(host);
    final int max = address.length * 8;
    final int bits;
    if (slash < 0) {
      bits = max;
    } else {
      final String suffix = text.substring(slash + 1);
      if (suffix.isEmpty() || suffix.length() > 3 || !suffix.chars().allMatch(Character::isDigit)) {
        throw new IllegalArgumentException("not a prefix length: " + text);
      }
      bits = Integer.parseInt(suffix);
      if (bits > max) {
        throw new IllegalArgumentException("prefix longer than the address: " + text);
      }
    }
    return new IpRange(mask(address, bits), bits, text);
  }

  private static byte[] numeric(final String host) {
    final boolean v4 = !host.isEmpty() && host.chars().allMatch(c -> c == '.' || Character.isDigit(c));
    final boolean v6 = host.indexOf(':') >= 0
        && host.chars().allMatch(c -> c == ':' || c == '.' || Character.digit(c, 16) >= 0);
    if (!v4 && !v6) {
      throw new IllegalArgumentException("not a numeric IP address: " + host);
    }
    if (v4 && host.split("\\.", -1).length != 4) {
      throw new IllegalArgumentException("not an IPv4 address: " + host);
    }
    try {
      return canonical(InetAddress.getByName(host).getAddress());
    } catch (final UnknownHostException e) {
      throw new IllegalArgumentException("not an IP address: " + host, e);
    }
  }

  private static byte[] canonical(final byte[] address) {
    if (address.length == 16) {
      for (int i = 0; i < 10; i++) {
        if (address[i] != 0) {
          return address;
        }
      }
      if (address[10] == (byte) 0xff && address[11] == (byte) 0xff) {
        final byte[] v4 = new byte[4];
        System.arraycopy(address, 12, v4, 0, 4);
        return v4;
      }
    }
    return address;
  }

  private static byte[] mask(final byte[] address, final int bits) {
    final byte[] out = address.clone();
    for (int i = 0; i < out.length; i++) {
      final int keep = Math.max(0, Math.min(8, bits - i * 8));
      out[i] &= (byte) (0xff << (8 - keep));
    }
    return out;
  }

  /** Whether {@code address} is in this range. */
  public boolean contains(final InetAddress address) {
    final byte[] a = canonical(address.getAddress());
    return a.length == network.length && Arrays.equals(mask(a, bits), network);
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof IpRange other && bits == other.bits
        && Arrays.equals(network, other.network);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(network) + bits;
  }

  @Override
  public String toString() {
    return text;
  }
}
