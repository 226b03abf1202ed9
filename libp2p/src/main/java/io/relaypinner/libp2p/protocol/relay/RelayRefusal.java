package io.relaypinner.libp2p.protocol.relay;

import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Status;
import java.util.Locale;

/**
 * Why the relay refused a hop request or a circuit failed to open, with the status it answers
 * (libp2p/specs relay/circuit-v2.md). Each is counted ({@link CircuitRelayEngine#refusals()}).
 */
public enum RelayRefusal {
  /** {@link CircuitRelayConfig#maxReservations()} reached by other peers. */
  RESERVATION_LIMIT(Status.RESERVATION_REFUSED),
  /** {@link CircuitRelayConfig#maxReservationsPerIp()} reached by other peers on that IP key. */
  IP_RESERVATION_LIMIT(Status.RESERVATION_REFUSED),
  /** A request over a relayed connection (relays do not chain). */
  RELAYED_CONNECTION(Status.PERMISSION_DENIED),
  /** CONNECT to a peer without a reservation (or no longer connected). */
  NO_RESERVATION(Status.NO_RESERVATION),
  /** {@link CircuitRelayConfig#maxCircuits()} reached. */
  CIRCUIT_LIMIT(Status.RESOURCE_LIMIT_EXCEEDED),
  /** {@link CircuitRelayConfig#maxCircuitsPerPeer()} reached for the source or destination. */
  PEER_CIRCUIT_LIMIT(Status.RESOURCE_LIMIT_EXCEEDED),
  /**
   * {@link CircuitRelayConfig#maxCircuitsPerIp()} reached for the source's or the destination's
   * IP key (IPv4 /32, IPv6 /64): PeerIds are free, one host must not hold every circuit.
   */
  IP_CIRCUIT_LIMIT(Status.RESOURCE_LIMIT_EXCEEDED),
  /** The stop exchange with the destination failed, was refused or timed out. */
  CONNECTION_FAILED(Status.CONNECTION_FAILED),
  /** A message that does not parse or lacks a required field. */
  MALFORMED(Status.MALFORMED_MESSAGE),
  /** A message over {@link CircuitRelayConfig#maxMessageSize()} (the stream is closed). */
  OVERSIZED(Status.MALFORMED_MESSAGE),
  /** A message of a type the relay does not take (STATUS sent to the hop service). */
  UNEXPECTED(Status.UNEXPECTED_MESSAGE),
  /** No request within {@link CircuitRelayConfig#hopTimeout()} (the stream is closed). */
  TIMEOUT(Status.CONNECTION_FAILED);

  private final Status status;

  RelayRefusal(final Status status) {
    this.status = status;
  }

  /** What the relay answers. */
  public Status status() {
    return status;
  }

  /** The metrics label, e.g. {@code reservation_limit}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
