package io.relaypinner.handoff.deploy;

/**
 * Where a guest port is reachable on the host (notes/handoff.md 1, {@code PortMapping}).
 *
 * @param host the host port
 * @param tcp mapped over TCP
 * @param udp mapped over UDP
 */
public record PortMapping(int host, boolean tcp, boolean udp) {
  public PortMapping {
    if (host < 1 || host > 65535) {
      throw new IllegalArgumentException("host port must be 1-65535, got " + host);
    }
  }

  /** A TCP mapping. */
  public static PortMapping tcp(final int host) {
    return new PortMapping(host, true, false);
  }
}
