package io.relaypinner.handoff.deploy;

/**
 * One port an image needs forwarded from the host (notes/handoff.md 4.1
 * {@code requiredPortForwards}).
 *
 * @param port the guest port, 1-65535
 * @param tcp forwarded over TCP
 * @param udp forwarded over UDP
 * @param purpose a human description, may be empty
 */
public record PortForward(int port, boolean tcp, boolean udp, String purpose) {
  public PortForward {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be 1-65535, got " + port);
    }
    if (!tcp && !udp) {
      throw new IllegalArgumentException("port " + port + " must be forwarded over tcp, udp or "
          + "both");
    }
    purpose = purpose == null ? "" : purpose;
  }

  /** A TCP forward. */
  public static PortForward tcp(final int port, final String purpose) {
    return new PortForward(port, true, false, purpose);
  }
}
