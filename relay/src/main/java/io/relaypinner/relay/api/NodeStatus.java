package io.relaypinner.relay.api;

import java.util.Objects;

/**
 * What the HTTP routes need to know about the running node that the HTTP layer does not own
 * (spec 2.1): its identity, its serving zone and live counts. The libp2p host implements the
 * counts later; until then {@link #fixed} reports zero.
 *
 * <p>Called on event loops for every {@code GET /health}: implementations must answer at once
 * from memory (a volatile read or an atomic counter), never block or compute.
 */
public interface NodeStatus {
  /** The relay's peer id in its usual text form, e.g. {@code 12D3KooW…}. */
  String peerId();

  /**
   * The AutoTLS serving zone, {@code <peer id as CIDv1 libp2p-key base36>.<RELAY_AUTOTLS_DOMAIN>},
   * computed by whoever loads the identity.
   */
  String autoTlsServingZone();

  /** Open libp2p connections. */
  int activeConnections();

  /** How many multiaddrs the node advertises. */
  int multiaddrCount();

  /**
   * The shared stores and whether each answers ({@code "up"} or {@code "down"}, as the last call
   * to it found it), by name ({@code s3}, {@code postgres}); null with the embedded stores (the
   * field is then absent from {@code /health}). Implementations return the same map instance
   * while nothing changed (the health route's cache compares by identity).
   */
  default java.util.Map<String, String> stores() {
    return null;
  }

  /** A status with fixed identity and zero counts, until the libp2p host exists. */
  static NodeStatus fixed(final String peerId, final String autoTlsServingZone) {
    Objects.requireNonNull(peerId, "peerId");
    Objects.requireNonNull(autoTlsServingZone, "autoTlsServingZone");
    return new NodeStatus() {
      @Override
      public String peerId() {
        return peerId;
      }

      @Override
      public String autoTlsServingZone() {
        return autoTlsServingZone;
      }

      @Override
      public int activeConnections() {
        return 0;
      }

      @Override
      public int multiaddrCount() {
        return 0;
      }
    };
  }
}
