package io.relaypinner.libp2p.protocol.relay;

import java.time.Duration;
import java.util.Objects;

/**
 * Limits of the circuit relay v2 hop service (libp2p/specs relay/circuit-v2.md). Defaults follow
 * the JavaScript relay of local-first apps ({@code RELAY_CIRCUIT_*} variables: 300 s hop timeout,
 * 10,000 reservations, 20 h reservations, 10 GiB and 20 min per circuit); the caps per IP and on
 * circuits, which that relay does not have, follow go-libp2p's resource limits in spirit.
 * Zero means unlimited for {@link #maxReservations}, {@link #reservationTtl},
 * {@link #defaultDataLimit} and {@link #defaultDurationLimit}.
 *
 * @param hopTimeout how long a hop stream may take from its opening to the end of its exchange
 *     (reading the request; for CONNECT also the stop exchange with the target)
 * @param maxReservations reservations held at once (0 = unlimited)
 * @param maxReservationsPerIp reservations held at once by peers behind one IP key (IPv4
 *     address, IPv6 /64 by default: what {@link CircuitRelay} is given to key addresses with)
 * @param reservationTtl how long a reservation lasts unless refreshed (0 = while connected; the
 *     reservation then advertises an expiry {@link #OPEN_ENDED_ADVERTISED_TTL} ahead)
 * @param defaultDataLimit bytes each circuit may carry in each direction (0 = unlimited)
 * @param defaultDurationLimit how long each circuit may stay open (0 = unlimited)
 * @param maxCircuits circuits open at once
 * @param maxCircuitsPerPeer circuits open at once with one peer as source or destination
 * @param maxCircuitsPerIp circuits open at once whose source connection or destination
 *     reservation is from one IP key (PeerIds are free: without it one host holds every
 *     circuit, each 10 GiB and 20 min, and uses the relay as a bandwidth proxy)
 * @param maxMessageSize largest hop or stop message accepted (go-libp2p and js-libp2p: 4 KiB)
 */
public record CircuitRelayConfig(
    Duration hopTimeout,
    int maxReservations,
    int maxReservationsPerIp,
    Duration reservationTtl,
    long defaultDataLimit,
    Duration defaultDurationLimit,
    int maxCircuits,
    int maxCircuitsPerPeer,
    int maxCircuitsPerIp,
    int maxMessageSize) {

  public static final Duration DEFAULT_HOP_TIMEOUT = Duration.ofSeconds(300);
  public static final int DEFAULT_MAX_RESERVATIONS = 10_000;
  public static final int DEFAULT_MAX_RESERVATIONS_PER_IP = 64;
  public static final Duration DEFAULT_RESERVATION_TTL = Duration.ofHours(20);
  public static final long DEFAULT_DATA_LIMIT = 10L * 1024 * 1024 * 1024;
  public static final Duration DEFAULT_DURATION_LIMIT = Duration.ofMinutes(20);
  public static final int DEFAULT_MAX_CIRCUITS = 1_024;
  public static final int DEFAULT_MAX_CIRCUITS_PER_PEER = 16;
  /** Two peers' worth: a household behind one address, not a bandwidth proxy (1/32 of all). */
  public static final int DEFAULT_MAX_CIRCUITS_PER_IP = 32;
  public static final int DEFAULT_MAX_MESSAGE_SIZE = 4_096;
  /** The expiry a reservation advertises when {@link #reservationTtl} is zero. */
  public static final Duration OPEN_ENDED_ADVERTISED_TTL = Duration.ofHours(1);

  /** Upper bounds of the settings. */
  public static final Duration MAX_TIMEOUT = Duration.ofHours(1);
  public static final int MAX_RESERVATIONS = 1_000_000;
  public static final Duration MAX_RESERVATION_TTL = Duration.ofDays(7);
  public static final Duration MAX_DURATION_LIMIT = Duration.ofDays(1);
  public static final int MAX_CIRCUITS = 100_000;

  public static final CircuitRelayConfig DEFAULT = builder().build();

  /** Validates every limit. */
  public CircuitRelayConfig {
    positive("hopTimeout", hopTimeout, MAX_TIMEOUT);
    range("maxReservations", maxReservations, 0, MAX_RESERVATIONS);
    range("maxReservationsPerIp", maxReservationsPerIp, 1, MAX_RESERVATIONS);
    nonNegative("reservationTtl", reservationTtl, MAX_RESERVATION_TTL);
    if (defaultDataLimit < 0) {
      throw new IllegalArgumentException("defaultDataLimit must be >= 0: " + defaultDataLimit);
    }
    nonNegative("defaultDurationLimit", defaultDurationLimit, MAX_DURATION_LIMIT);
    range("maxCircuits", maxCircuits, 1, MAX_CIRCUITS);
    range("maxCircuitsPerPeer", maxCircuitsPerPeer, 1, MAX_CIRCUITS);
    range("maxCircuitsPerIp", maxCircuitsPerIp, 1, MAX_CIRCUITS);
    range("maxMessageSize", maxMessageSize, 256, 64 * 1024);
  }

  /** Whether circuits carry a limit (then the Limit message goes to both ends). */
  public boolean limited() {
    return defaultDataLimit > 0 || !defaultDurationLimit.isZero();
  }

  private static void positive(final String name, final Duration value, final Duration max) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero() || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(name + " must be positive and at most " + max + ": "
          + value);
    }
  }

  private static void nonNegative(final String name, final Duration value, final Duration max) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(name + " must be between 0 and " + max + ": " + value);
    }
  }

  private static void range(final String name, final int value, final int min, final int max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(name + " must be in " + min + "-" + max + ": " + value);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder().hopTimeout(hopTimeout).maxReservations(maxReservations)
        .maxReservationsPerIp(maxReservationsPerIp).reservationTtl(reservationTtl)
        .defaultDataLimit(defaultDataLimit).defaultDurationLimit(defaultDurationLimit)
        .maxCircuits(maxCircuits).maxCircuitsPerPeer(maxCircuitsPerPeer)
        .maxCircuitsPerIp(maxCircuitsPerIp).maxMessageSize(maxMessageSize);
  }

  /** Builds a {@link CircuitRelayConfig}; {@link #build()} validates. */
  public static final class Builder {
    private Duration hopTimeout = DEFAULT_HOP_TIMEOUT;
    private int maxReservations = DEFAULT_MAX_RESERVATIONS;
    private int maxReservationsPerIp = DEFAULT_MAX_RESERVATIONS_PER_IP;
    private Duration reservationTtl = DEFAULT_RESERVATION_TTL;
    private long defaultDataLimit = DEFAULT_DATA_LIMIT;
    private Duration defaultDurationLimit = DEFAULT_DURATION_LIMIT;
    private int maxCircuits = DEFAULT_MAX_CIRCUITS;
    private int maxCircuitsPerPeer = DEFAULT_MAX_CIRCUITS_PER_PEER;
    private int maxCircuitsPerIp = DEFAULT_MAX_CIRCUITS_PER_IP;
    private int maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE;

    private Builder() {}

    public Builder hopTimeout(final Duration value) {
      this.hopTimeout = value;
      return this;
    }

    public Builder maxReservations(final int value) {
      this.maxReservations = value;
      return this;
    }

    public Builder maxReservationsPerIp(final int value) {
      this.maxReservationsPerIp = value;
      return this;
    }

    public Builder reservationTtl(final Duration value) {
      this.reservationTtl = value;
      return this;
    }

    public Builder defaultDataLimit(final long value) {
      this.defaultDataLimit = value;
      return this;
    }

    public Builder defaultDurationLimit(final Duration value) {
      this.defaultDurationLimit = value;
      return this;
    }

    public Builder maxCircuits(final int value) {
      this.maxCircuits = value;
      return this;
    }

    public Builder maxCircuitsPerPeer(final int value) {
      this.maxCircuitsPerPeer = value;
      return this;
    }

    /** Default {@value CircuitRelayConfig#DEFAULT_MAX_CIRCUITS_PER_IP}. */
    public Builder maxCircuitsPerIp(final int value) {
      this.maxCircuitsPerIp = value;
      return this;
    }

    public Builder maxMessageSize(final int value) {
      this.maxMessageSize = value;
      return this;
    }

    /**
     * The config.
     *
     * @throws IllegalArgumentException naming the first limit out of range
     */
    public CircuitRelayConfig build() {
      return new CircuitRelayConfig(hopTimeout, maxReservations, maxReservationsPerIp,
          reservationTtl, defaultDataLimit, defaultDurationLimit, maxCircuits,
          maxCircuitsPerPeer, maxCircuitsPerIp, maxMessageSize);
    }
  }
}
