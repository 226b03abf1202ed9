package io.relaypinner.libp2p.protocol.relay;

import io.relaypinner.common.budget.KeyedScopes;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The state of a circuit relay v2 hop service (libp2p/specs relay/circuit-v2.md), without Netty:
 * reservations (one per peer, refreshed in place, bounded in total and per IP key, expiring on
 * the injected {@link Clock}, released when the connection that made them closes) and circuits
 * (bounded in total, per peer and per IP key, each with the configured data and duration
 * limits). Counts refusals by {@link RelayRefusal}, circuit ends by {@link CircuitEnd}, and
 * bytes relayed.
 *
 * <p>IP keys are what the caller makes of a connection's remote address: by default IPv4 /32
 * and IPv6 /64 ({@code io.relaypinner.common.budget.IpPrefix}), since PeerIds are free and an
 * IPv6 host has a whole /64 of addresses. A null key (a trusted proxy's connection, which
 * carries many clients) is capped only in total and per peer. The per-IP counts are keyed scopes
 * of the node budget ({@link IpScopes}: circuits are {@link Resource#STREAMS} of a
 * {@code circuit_ip} scope, reservations {@link Resource#WORK} of a {@code reservation_ip}
 * scope), so a refusal is also counted there
 * ({@code relay_resource_limit_hits_total{scope="circuit_ip",resource="streams"}}).
 *
 * <p>Thread-safe: hop streams of every event loop call it; each call is short and never blocks.
 */
public final class CircuitRelayEngine {
  /**
   * Where the per-IP caps come from: one scope per IP key for circuits (their
   * {@link Resource#STREAMS} limit is the most circuits of one key) and one for reservations
   * (their {@link Resource#WORK} limit is the most reservations of one key).
   */
  public record IpScopes(KeyedScopes circuits, KeyedScopes reservations) {
    /** Distinct IP keys held at once when the engine makes its own scopes. */
    public static final int MAX_KEYS = 65_536;

    public IpScopes {
      Objects.requireNonNull(circuits, "circuits");
      Objects.requireNonNull(reservations, "reservations");
    }

    /**
     * Scopes of their own under {@code parent} with {@code config}'s per-IP caps
     * ({@link CircuitRelayConfig#maxCircuitsPerIp()}, {@link CircuitRelayConfig#maxReservationsPerIp()}),
     * refusals told to {@code listener}.
     */
    public static IpScopes of(final Scope parent, final CircuitRelayConfig config,
        final LimitListener listener) {
      return new IpScopes(
          new KeyedScopes(parent, "circuit_ip",
              Limits.NONE.with(Resource.STREAMS, config.maxCircuitsPerIp()), MAX_KEYS, listener),
          new KeyedScopes(parent, "reservation_ip",
              Limits.NONE.with(Resource.WORK, config.maxReservationsPerIp()), MAX_KEYS,
              listener));
    }
  }

  /** One IP key's share held by a circuit or a reservation: its key and one unit of it. */
  private record IpHold(KeyedScopes.Handle key, io.relaypinner.common.budget.Reservation unit) {
    /** Takes one {@code resource} of {@code ip}'s scope, or null when it is full. */
    static IpHold take(final KeyedScopes scopes, final String ip, final Resource resource) {
      final KeyedScopes.Handle key = scopes.open(ip);
      if (key == null) {
        return null;
      }
      final io.relaypinner.common.budget.Reservation unit = key.scope().reserve(resource, 1);
      if (unit == null) {
        key.close();
        return null;
      }
      return new IpHold(key, unit);
    }

    void release() {
      unit.close();
      key.close();
    }
  }

  /**
   * A held reservation.
   *
   * @param peer the reserving peer
   * @param holder the connection (an opaque key) whose closing releases it
   * @param ip the IP key it counts against; null: none (not capped per IP)
   * @param expires when it lapses unless refreshed; {@link Instant#MAX} when the TTL is zero
   */
  public record Reservation(PeerId peer, Object holder, String ip, Instant expires) {}

  /** What a RESERVE gets. */
  public sealed interface ReserveOutcome permits Reserved, Refused {}

  /**
   * @param reservation the reservation now held
   * @param advertisedExpiry the expiry to put on the wire (UNIX seconds)
   * @param refreshed whether the peer held one already (same slot)
   */
  public record Reserved(Reservation reservation, long advertisedExpiry, boolean refreshed)
      implements ReserveOutcome {}

  /** A refusal, already counted. */
  public record Refused(RelayRefusal reason) implements ReserveOutcome, CircuitOutcome {}

  /** What a CONNECT gets. */
  public sealed interface CircuitOutcome permits Circuit, Refused {}

  /**
   * An admitted circuit: hand it back to {@link #circuitEnded} exactly once.
   *
   * @param id a number for logs
   * @param source the dialing peer
   * @param destination the reserved peer
   * @param destinationHolder the connection holding the destination's reservation
   * @param dataLimit bytes allowed in each direction (0 = unlimited)
   * @param durationLimit how long it may stay open (zero = unlimited)
   * @param sourceIp the IP key of the source's connection it counts against, or null
   * @param destinationIp the IP key of the destination's reservation it counts against, or null
   *     (also null when the same as {@code sourceIp}: a circuit counts once per key)
   */
  public record Circuit(long id, PeerId source, PeerId destination, Object destinationHolder,
      long dataLimit, Duration durationLimit, String sourceIp, String destinationIp)
      implements CircuitOutcome {}

  private final CircuitRelayConfig config;
  private final Clock clock;
  private final Map<PeerId, Reservation> reservations = new HashMap<>();
  private final IpScopes ipScopes;
  /** The IP share each reservation holds (only those counted per IP). */
  private final Map<PeerId, IpHold> reservationHolds = new HashMap<>();
  private final Map<PeerId, Integer> circuitsPerPeer = new HashMap<>();
  /** The IP shares each open circuit holds, by circuit id. */
  private final Map<Long, List<IpHold>> circuitHolds = new HashMap<>();
  private int circuits;
  private long nextCircuitId;
  private final Map<RelayRefusal, AtomicLong> refusals = new EnumMap<>(RelayRefusal.class);
  private final Map<CircuitEnd, AtomicLong> ends = new EnumMap<>(CircuitEnd.class);
  private final AtomicLong reservationsMade = new AtomicLong();
  private final AtomicLong reservationsRefreshed = new AtomicLong();
  private final AtomicLong reservationsExpired = new AtomicLong();
  private final AtomicLong reservationsReleased = new AtomicLong();
  private final AtomicLong circuitsOpened = new AtomicLong();
  private final AtomicLong bytesRelayed = new AtomicLong();

  /** An engine whose per-IP caps are scopes of its own, from {@code config}'s limits. */
  public CircuitRelayEngine(final CircuitRelayConfig config, final Clock clock) {
    this(config, clock, IpScopes.of(Scope.root("circuit_relay", Limits.NONE, LimitListener.NONE),
        config, LimitListener.NONE));
  }

  /**
   * An engine whose per-IP caps are {@code ipScopes} (the node budget's; their limits replace
   * {@code config}'s per-IP values).
   */
  public CircuitRelayEngine(final CircuitRelayConfig config, final Clock clock,
      final IpScopes ipScopes) {
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.ipScopes = Objects.requireNonNull(ipScopes, "ipScopes");
    for (final RelayRefusal reason : RelayRefusal.values()) {
      refusals.put(reason, new AtomicLong());
    }
    for (final CircuitEnd end : CircuitEnd.values()) {
      ends.put(end, new AtomicLong());
    }
  }

  public CircuitRelayConfig config() {
    return config;
  }

  /**
   * A RESERVE from {@code peer} over the connection {@code holder} from the IP key {@code ip}
   * (null: not capped per IP). A peer that holds a reservation has it refreshed in place (new
   * expiry, same slot; it moves to the new connection and IP), so reconnecting and refreshing
   * never need a free slot.
   */
  public synchronized ReserveOutcome reserve(final PeerId peer, final Object holder,
      final String ip) {
    final Instant now = clock.instant();
    expire(now);
    final Reservation existing = reservations.get(peer);
    if (existing == null && config.maxReservations() > 0
        && reservations.size() >= config.maxReservations()) {
      return refuse(RelayRefusal.RESERVATION_LIMIT);
    }
    // A refresh from the same IP key keeps its share; a new key needs one of its own.
    final boolean sameIp = existing != null && Objects.equals(ip, existing.ip());
    IpHold hold = null;
    if (ip != null && !sameIp) {
      hold = IpHold.take(ipScopes.reservations(), ip, Resource.WORK);
      if (hold == null) {
        return refuse(RelayRefusal.IP_RESERVATION_LIMIT);
      }
    }
    final Duration ttl = config.reservationTtl();
    final Instant expires = ttl.isZero() ? Instant.MAX : now.plus(ttl);
    final Reservation reservation = new Reservation(peer, holder, ip, expires);
    if (existing != null) {
      if (sameIp) {
        reservations.remove(peer);
      } else {
        remove(existing);
      }
      reservationsRefreshed.incrementAndGet();
    } else {
      reservationsMade.incrementAndGet();
    }
    reservations.put(peer, reservation);
    if (hold != null) {
      reservationHolds.put(peer, hold);
    }
    final Instant advertised = ttl.isZero() ? now.plus(CircuitRelayConfig.OPEN_ENDED_ADVERTISED_TTL)
        : expires;
    return new Reserved(reservation, advertised.getEpochSecond(), existing != null);
  }

  /**
   * The connection {@code holder} of {@code peer} closed: its reservation, if it is the one that
   * made (or last refreshed) it, is released. A reservation refreshed over a newer connection is
   * kept.
   *
   * @return whether a reservation was released
   */
  public synchronized boolean connectionClosed(final PeerId peer, final Object holder) {
    final Reservation existing = reservations.get(peer);
    if (existing == null || existing.holder() != holder) {
      return false;
    }
    remove(existing);
    reservationsReleased.incrementAndGet();
    return true;
  }

  /** The live reservation of {@code peer}. */
  public synchronized Optional<Reservation> reservation(final PeerId peer) {
    expire(clock.instant());
    return Optional.ofNullable(reservations.get(peer));
  }

  /**
   * A CONNECT from {@code source} to {@code destination}, the source's IP unknown (not capped
   * per IP on the source's side).
   */
  public CircuitOutcome openCircuit(final PeerId source, final PeerId destination) {
    return openCircuit(source, null, destination);
  }

  /**
   * A CONNECT from {@code source}, connected from the IP key {@code sourceIp} (null: not capped
   * per IP), to {@code destination}: admitted when the destination holds a reservation and the
   * circuit caps allow: in total, per peer (source and destination) and per IP key (the
   * source's connection and the destination's reservation; a circuit between two peers of one
   * key counts once).
   */
  public synchronized CircuitOutcome openCircuit(final PeerId source, final String sourceIp,
      final PeerId destination) {
    expire(clock.instant());
    final Reservation reservation = reservations.get(destination);
    if (reservation == null) {
      return refuse(RelayRefusal.NO_RESERVATION);
    }
    if (circuits >= config.maxCircuits()) {
      return refuse(RelayRefusal.CIRCUIT_LIMIT);
    }
    if (circuitsPerPeer.getOrDefault(source, 0) >= config.maxCircuitsPerPeer()
        || circuitsPerPeer.getOrDefault(destination, 0) >= config.maxCircuitsPerPeer()) {
      return refuse(RelayRefusal.PEER_CIRCUIT_LIMIT);
    }
    final String destinationIp = reservation.ip() == null || reservation.ip().equals(sourceIp)
        ? null : reservation.ip();
    final List<IpHold> holds = new ArrayList<>(2);
    for (final String ip : new String[] {sourceIp, destinationIp}) {
      if (ip == null) {
        continue;
      }
      final IpHold hold = IpHold.take(ipScopes.circuits(), ip, Resource.STREAMS);
      if (hold == null) {
        holds.forEach(IpHold::release);
        return refuse(RelayRefusal.IP_CIRCUIT_LIMIT);
      }
      holds.add(hold);
    }
    circuits++;
    circuitsPerPeer.merge(source, 1, Integer::sum);
    circuitsPerPeer.merge(destination, 1, Integer::sum);
    circuitsOpened.incrementAndGet();
    final long id = ++nextCircuitId;
    if (!holds.isEmpty()) {
      circuitHolds.put(id, holds);
    }
    return new Circuit(id, source, destination, reservation.holder(),
        config.defaultDataLimit(), config.defaultDurationLimit(), sourceIp, destinationIp);
  }

  /** A circuit admitted by {@link #openCircuit} ended (or never got going). */
  public synchronized void circuitEnded(final Circuit circuit, final CircuitEnd end) {
    circuits--;
    decrement(circuitsPerPeer, circuit.source());
    decrement(circuitsPerPeer, circuit.destination());
    final List<IpHold> holds = circuitHolds.remove(circuit.id());
    if (holds != null) {
      holds.forEach(IpHold::release);
    }
    ends.get(end).incrementAndGet();
  }

  /** Counts bytes a circuit carried (as they pass, so metrics stay live on long circuits). */
  public void countBytes(final long bytes) {
    bytesRelayed.addAndGet(bytes);
  }

  /** Counts a refusal decided outside the engine (bad messages, timeouts, failed stops). */
  public Refused refuse(final RelayRefusal reason) {
    refusals.get(reason).incrementAndGet();
    return new Refused(reason);
  }

  /** Drops lapsed reservations; the service calls it periodically. */
  public synchronized int expire() {
    return expire(clock.instant());
  }

  private int expire(final Instant now) {
    int removed = 0;
    for (final Iterator<Reservation> it = reservations.values().iterator(); it.hasNext(); ) {
      final Reservation reservation = it.next();
      if (!reservation.expires().isAfter(now)) {
        it.remove();
        releaseIp(reservation.peer());
        reservationsExpired.incrementAndGet();
        removed++;
      }
    }
    return removed;
  }

  private void remove(final Reservation reservation) {
    reservations.remove(reservation.peer());
    releaseIp(reservation.peer());
  }

  private void releaseIp(final PeerId peer) {
    final IpHold hold = reservationHolds.remove(peer);
    if (hold != null) {
      hold.release();
    }
  }

  private static <K> void decrement(final Map<K, Integer> counts, final K key) {
    counts.computeIfPresent(key, (k, v) -> v <= 1 ? null : v - 1);
  }

  /** Reservations held now. */
  public synchronized int reservations() {
    return reservations.size();
  }

  /** Circuits open now. */
  public synchronized int openCircuits() {
    return circuits;
  }

  /** IP addresses with at least one reservation (bounded by the reservations). */
  public synchronized int reservingIps() {
    return ipScopes.reservations().size();
  }

  /** IP keys with at least one open circuit (bounded by twice the circuits). */
  public synchronized int ipsWithCircuits() {
    return ipScopes.circuits().size();
  }

  /** The per-IP scopes (for metrics and tests). */
  public IpScopes ipScopes() {
    return ipScopes;
  }

  /** Peers with at least one open circuit (bounded by twice the circuits). */
  public synchronized int peersWithCircuits() {
    return circuitsPerPeer.size();
  }

  /** Refusals so far, by reason (every reason present). */
  public Map<RelayRefusal, Long> refusals() {
    final Map<RelayRefusal, Long> out = new EnumMap<>(RelayRefusal.class);
    refusals.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  /** Circuits ended so far, by how (every kind present). */
  public Map<CircuitEnd, Long> circuitsEnded() {
    final Map<CircuitEnd, Long> out = new EnumMap<>(CircuitEnd.class);
    ends.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  public long reservationsMade() {
    return reservationsMade.get();
  }

  public long reservationsRefreshed() {
    return reservationsRefreshed.get();
  }

  public long reservationsExpired() {
    return reservationsExpired.get();
  }

  /** Reservations released because their connection closed. */
  public long reservationsReleased() {
    return reservationsReleased.get();
  }

  public long circuitsOpened() {
    return circuitsOpened.get();
  }

  /** Bytes carried by circuits, both directions, ended or still open. */
  public long bytesRelayed() {
    return bytesRelayed.get();
  }
}
