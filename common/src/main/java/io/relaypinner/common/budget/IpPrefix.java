package io.relaypinner.common.budget;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The key of a remote address in per-IP scopes: the address cut to a prefix, by default the
 * whole IPv4 address and the IPv6 /64 (one host or one customer network; an IPv6 host can use
 * any of its /64's addresses). An IPv4-mapped IPv6 address counts as its IPv4 address.
 */
public record IpPrefix(int ipv4Bits, int ipv6Bits) {
  /** IPv4 /32, IPv6 /64. */
  public static final IpPrefix DEFAULT = new IpPrefix(32, 64);

  public IpPrefix {
    if (ipv4Bits < 1 || ipv4Bits > 32 || ipv6Bits < 1 || ipv6Bits > 128) {
      throw new IllegalArgumentException("prefix lengths out of range: IPv4 /" + ipv4Bits
          + ", IPv6 /" + ipv6Bits);
    }
  }

  /** The key of {@code address}: {@code 192.0.2.7/32}, {@code 2001:db8:1:2:0:0:0:0/64}. */
  public String key(final InetAddress address) {
    final byte[] bytes = address.getAddress();
    if (address instanceof Inet6Address && isMappedIpv4(bytes)) {
      final byte[] v4 = new byte[4];
      System.arraycopy(bytes, 12, v4, 0, 4);
      return cut(v4, ipv4Bits);
    }
    return cut(bytes, address instanceof Inet4Address ? ipv4Bits : ipv6Bits);
  }

  private static boolean isMappedIpv4(final byte[] bytes) {
    for (int i = 0; i < 10; i++) {
      if (bytes[i] != 0) {
        return false;
      }
    }
    return bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
  }

  private static String cut(final byte[] bytes, final int bits) {
    final byte[] masked = bytes.clone();
    for (int i = 0; i < masked.length; i++) {
      final int keep = Math.max(0, Math.min(8, bits - i * 8));
      masked[i] &= (byte) (0xff << (8 - keep));
    }
    try {
      return InetAddress.getByAddress(masked).getHostAddress() + "/" + bits;
    } catch (final UnknownHostException e) {
      throw new AssertionError(e);
    }
  }
}
