package io.relaypinner.libp2p.protocol.relay;

import com.google.protobuf.ByteString;
import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;
import io.relaypinner.common.budget.IpPrefix;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostListener;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayEngine.Circuit;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayEngine.Refused;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayEngine.Reserved;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.HopMessage;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Limit;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Reservation;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Status;
import io.relaypinner.libp2p.record.ReservationVoucher;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiaddrProtocol;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.PeerId;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A circuit relay v2 relay (libp2p/specs relay/circuit-v2.md) on a {@link Host}: answers
 * {@value #HOP_PROTOCOL_ID} (RESERVE and CONNECT), opens {@value #STOP_PROTOCOL_ID} to the
 * destination of a CONNECT and splices the two streams ({@link CircuitSplice}). Reservations come
 * with a voucher signed by the host's key ({@link ReservationVoucher}) and the relay's addresses;
 * the circuit's {@code Limit} goes to both ends. State and limits are in the
 * {@link CircuitRelayEngine}, which this feeds with connection closes and expires once a minute.
 * Compatible with js-libp2p {@code @libp2p/circuit-relay-v2} 3.2 (libp2p 2) and 4.2 (libp2p 3)
 * clients, which reserve, dial {@code /p2p-circuit} addresses and accept relayed connections.
 */
public final class CircuitRelay implements AutoCloseable {
  public static final String HOP_PROTOCOL_ID = "/libp2p/circuit/relay/0.2.0/hop";
  public static final String STOP_PROTOCOL_ID = "/libp2p/circuit/relay/0.2.0/stop";
  private static final Logger LOG = LoggerFactory.getLogger(CircuitRelay.class);
  private static final Duration EXPIRY_SWEEP = Duration.ofMinutes(1);
  /** Relay addresses put in a reservation: enough for every transport, bounded for the frame. */
  private static final int MAX_RESERVATION_ADDRS = 16;

  private final Host host;
  private final CircuitRelayEngine engine;
  private final Supplier<List<Multiaddr>> addresses;
  private final Function<Connection, String> ipKey;
  private final ScheduledFuture<?> sweeper;

  private CircuitRelay(final Host host, final CircuitRelayEngine engine,
      final Supplier<List<Multiaddr>> addresses, final Function<Connection, String> ipKey) {
    this.host = host;
    this.engine = engine;
    this.addresses = addresses;
    this.ipKey = ipKey;
    this.sweeper = host.eventLoops().group().scheduleAtFixedRate(engine::expire,
        EXPIRY_SWEEP.toMillis(), EXPIRY_SWEEP.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Starts the relay on {@code host}.
   *
   * @param addresses the relay's public addresses (without {@code /p2p}), read for every
   *     reservation; the host's listen addresses when nothing better is known
   */
  public static CircuitRelay start(final Host host, final CircuitRelayConfig config,
      final Clock clock, final Supplier<List<Multiaddr>> addresses) {
    return start(host, config, clock, addresses,
        ipKeys(IpPrefix.DEFAULT::key, address -> false));
  }

  /**
   * Starts the relay on {@code host}, keying the per-IP caps with {@code ipKey} (see
   * {@link #ipKeys}).
   *
   * @param addresses the relay's public addresses (without {@code /p2p}), read for every
   *     reservation; the host's listen addresses when nothing better is known
   * @param ipKey a connection's IP key for the per-IP caps, or null for one not capped per IP
   */
  public static CircuitRelay start(final Host host, final CircuitRelayConfig config,
      final Clock clock, final Supplier<List<Multiaddr>> addresses,
      final Function<Connection, String> ipKey) {
    return start(host, new CircuitRelayEngine(config, clock), addresses, ipKey);
  }

  /**
   * Starts the relay on {@code host}, its per-IP caps taken from {@code ipScopes} (the node
   * budget's keyed scopes: their limits are the caps), keyed with {@code ipKey}.
   */
  public static CircuitRelay start(final Host host, final CircuitRelayConfig config,
      final Clock clock, final Supplier<List<Multiaddr>> addresses,
      final Function<Connection, String> ipKey, final CircuitRelayEngine.IpScopes ipScopes) {
    return start(host, new CircuitRelayEngine(config, clock, ipScopes), addresses, ipKey);
  }

  private static CircuitRelay start(final Host host, final CircuitRelayEngine engine,
      final Supplier<List<Multiaddr>> addresses, final Function<Connection, String> ipKey) {
    final CircuitRelay relay = new CircuitRelay(Objects.requireNonNull(host, "host"),
        engine, Objects.requireNonNull(addresses, "addresses"),
        Objects.requireNonNull(ipKey, "ipKey"));
    host.addListener(new HostListener() {
      @Override
      public void connectionClosed(final Connection connection) {
        if (relay.engine.connectionClosed(connection.remotePeer(), connection)) {
          LOG.debug("reservation of {} released: its connection closed",
              connection.remotePeer());
        }
      }
    });
    host.protocols().register(HOP_PROTOCOL_ID, (stream, protocol) -> {
      final Connection connection = Connection.of(stream).orElseThrow();
      stream.pipeline().addLast(new HopHandler(relay, connection));
    });
    return relay;
  }

  public CircuitRelayConfig config() {
    return engine.config();
  }

  /** The state and counters (for metrics and tests). */
  public CircuitRelayEngine engine() {
    return engine;
  }

  // ------------------------------------------------------------------ RESERVE

  void reserve(final HopHandler hop) {
    final Connection connection = hop.connection();
    final PeerId peer = connection.remotePeer();
    final CircuitRelayEngine.ReserveOutcome outcome = engine.reserve(peer, connection,
        ipKey.apply(connection));
    if (outcome instanceof Refused refused) {
      LOG.debug("reservation of {} refused: {}", peer, refused.reason().label());
      hop.refuse(refused.reason(), false);
      return;
    }
    final Reserved reserved = (Reserved) outcome;
    final Reservation.Builder reservation = Reservation.newBuilder()
        .setExpire(reserved.advertisedExpiry())
        .setVoucher(ByteString.copyFrom(new ReservationVoucher(host.peerId(), peer,
            reserved.advertisedExpiry()).seal(host.identity())));
    for (final Multiaddr address : relayAddresses()) {
      reservation.addAddrs(ByteString.copyFrom(address.bytes()));
    }
    final HopMessage.Builder response = HopMessage.newBuilder().setType(HopMessage.Type.STATUS)
        .setStatus(Status.OK).setReservation(reservation);
    final Limit limit = limit();
    if (limit != null) {
      response.setLimit(limit);
    }
    LOG.debug("reservation of {} {} until {}", peer, reserved.refreshed() ? "refreshed" : "made",
        reserved.advertisedExpiry());
    hop.respondAndClose(response.build());
  }

  private List<Multiaddr> relayAddresses() {
    final Set<Multiaddr> out = new LinkedHashSet<>();
    for (final Multiaddr address : addresses.get()) {
      if (address.has(MultiaddrProtocol.P2P_CIRCUIT)) {
        continue;
      }
      out.add(address.withoutPeerId().withPeerId(host.peerId()));
      if (out.size() == MAX_RESERVATION_ADDRS) {
        break;
      }
    }
    return List.copyOf(out);
  }

  /** The Limit message of every circuit, or null when circuits are unlimited. */
  private Limit limit() {
    final CircuitRelayConfig config = engine.config();
    if (!config.limited()) {
      return null;
    }
    final Limit.Builder limit = Limit.newBuilder();
    if (!config.defaultDurationLimit().isZero()) {
      // Whole seconds on the wire, rounded up: the relay enforces the exact duration.
      final long millis = config.defaultDurationLimit().toMillis();
      limit.setDuration((int) Math.min(Integer.MAX_VALUE, (millis + 999) / 1000));
    }
    if (config.defaultDataLimit() > 0) {
      limit.setData(config.defaultDataLimit());
    }
    return limit.build();
  }

  // ------------------------------------------------------------------ CONNECT

  void connect(final HopHandler hop, final HopMessage request) {
    final PeerId source = hop.connection().remotePeer();
    final PeerId destination;
    try {
      if (!request.hasPeer() || !request.getPeer().hasId()) {
        throw new MultiformatException("no peer");
      }
      destination = PeerId.fromBytes(request.getPeer().getId().toByteArray());
      for (final ByteString address : request.getPeer().getAddrsList()) {
        Multiaddr.fromBytes(address.toByteArray());
      }
    } catch (final MultiformatException e) {
      hop.refuse(RelayRefusal.MALFORMED, true);
      return;
    }
    final CircuitRelayEngine.CircuitOutcome outcome = engine.openCircuit(source,
        ipKey.apply(hop.connection()), destination);
    if (outcome instanceof Refused refused) {
      hop.refuse(refused.reason(), false);
      return;
    }
    final Circuit circuit = (Circuit) outcome;
    final Connection target = circuit.destinationHolder() instanceof Connection held
        && held.isOpen() ? held : host.connection(destination).orElse(null);
    if (target == null) {
      engine.circuitEnded(circuit, CircuitEnd.NOT_ESTABLISHED);
      hop.refuse(RelayRefusal.NO_RESERVATION, true);
      return;
    }
    final Limit limit = limit();
    final StopInitiator stop = new StopInitiator(source, limit, engine.config().maxMessageSize());
    final Channel hopStream = hop.context().channel();
    hop.onAbort(() -> stop.result().completeExceptionally(
        new TimeoutException("no answer from the destination within the hop timeout")));
    // Optimistic when the destination's identify listed the stop protocol: the CONNECT goes
    // with the proposal, a round trip off every relayed dial.
    host.newStream(target, List.of(STOP_PROTOCOL_ID), (stream, protocol) ->
        stream.pipeline().addLast(stop)).whenComplete((stream, error) -> {
          if (error != null) {
            stop.result().completeExceptionally(error);
          }
        });
    stop.result().whenComplete((accepted, error) -> hopStream.eventLoop().execute(() -> {
      if (error != null) {
        LOG.debug("circuit {} -> {} failed: {}", source, destination, error.toString());
        if (stop.context() != null) {
          stop.fail(error);
        }
        engine.circuitEnded(circuit, CircuitEnd.NOT_ESTABLISHED);
        if (hop.working()) {
          hop.refuse(RelayRefusal.CONNECTION_FAILED, true);
        } else {
          engine.refuse(RelayRefusal.CONNECTION_FAILED);
        }
        return;
      }
      splice(hop, circuit, accepted, limit);
    }));
  }

  private void splice(final HopHandler hop, final Circuit circuit, final StopInitiator stop,
      final Limit limit) {
    final CircuitSplice splice = new CircuitSplice(engine, circuit, hop.context().channel(),
        stop.context().channel());
    final HopMessage.Builder ok = HopMessage.newBuilder().setType(HopMessage.Type.STATUS)
        .setStatus(Status.OK);
    if (limit != null) {
      ok.setLimit(limit);
    }
    if (!hop.accept(ok.build(), splice.sourceEnd())) {
      splice.end(CircuitEnd.RESET);
      stop.context().close();
      return;
    }
    splice.start();
    stop.handOver(splice.destinationEnd());
    LOG.debug("circuit {} open: {} -> {}", circuit.id(), circuit.source(),
        circuit.destination());
  }

  /**
   * IP keys of connections: {@code key} of the remote address (the budget's
   * {@code IpPrefix}: IPv4 /32, IPv6 /64), null (not capped per IP) for an address
   * {@code exempt} says carries many clients (a trusted reverse proxy). A connection without an
   * IP address is keyed by its remote multiaddr.
   */
  public static Function<Connection, String> ipKeys(final Function<InetAddress, String> key,
      final Predicate<InetAddress> exempt) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(exempt, "exempt");
    return connection -> {
      final InetAddress address = addressOf(connection);
      if (address == null) {
        return connection.remoteAddress().toString();
      }
      return exempt.test(address) ? null : key.apply(address);
    };
  }

  private static InetAddress addressOf(final Connection connection) {
    if (connection.channel() != null
        && connection.channel().remoteAddress() instanceof InetSocketAddress inet
        && inet.getAddress() != null) {
      return inet.getAddress();
    }
    final Multiaddr address = connection.remoteAddress();
    final String ip = address.valueOf(MultiaddrProtocol.IP4)
        .or(() -> address.valueOf(MultiaddrProtocol.IP6)).orElse(null);
    if (ip == null) {
      return null;
    }
    try {
      // Numeric text from a multiaddr: no lookup.
      return InetAddress.getByName(ip);
    } catch (final UnknownHostException e) {
      return null;
    }
  }

  /** Stops the expiry sweep and answers no more hop streams. */
  @Override
  public void close() {
    sweeper.cancel(false);
    host.protocols().unregister(HOP_PROTOCOL_ID);
  }
}
