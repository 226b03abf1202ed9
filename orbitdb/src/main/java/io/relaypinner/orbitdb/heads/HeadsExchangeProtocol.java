package io.relaypinner.orbitdb.heads;

import io.netty.channel.Channel;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.ProtocolRegistry;
import io.relaypinner.libp2p.multistream.ProtocolInstaller;
import io.relaypinner.orbitdb.InvalidAddressException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * OrbitDB's heads exchange, {@code /orbitdb/heads/<address>} (the id is literally
 * {@code /orbitdb/heads} followed by the address, e.g. {@code /orbitdb/heads/orbitdb/zdpu…}):
 * as listener for every database the {@code endpoints} function knows (a protocol family on the
 * host's registry; unknown addresses get multistream {@code na}, which OrbitDB reads as "peer
 * does not have this database"), and as dialer with {@link #exchange}. See
 * {@link HeadsExchangeHandler} for the stream rules.
 *
 * <p>Thread-safe; one instance serves every database and connection.
 */
public final class HeadsExchangeProtocol {
  /** The prefix of every heads protocol id. */
  public static final String PREFIX = "/orbitdb/heads/";

  private final HeadsConfig config;
  private final Function<OrbitDbAddress, Optional<HeadsEndpoint>> endpoints;
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();

  /**
   * @param endpoints the endpoint of a followed database, or empty for one this node does not
   *     follow (called on event loops: must be fast)
   */
  public HeadsExchangeProtocol(final HeadsConfig config,
      final Function<OrbitDbAddress, Optional<HeadsEndpoint>> endpoints) {
    this.config = Objects.requireNonNull(config, "config");
    this.endpoints = Objects.requireNonNull(endpoints, "endpoints");
  }

  public HeadsConfig config() {
    return config;
  }

  /** The address a heads protocol id names, if it is one. */
  public static Optional<OrbitDbAddress> addressOf(final String protocolId) {
    if (!protocolId.startsWith(PREFIX + "orbitdb/")) {
      return Optional.empty();
    }
    try {
      return Optional.of(OrbitDbAddress.parse(protocolId.substring(PREFIX.length() - 1)));
    } catch (final InvalidAddressException e) {
      return Optional.empty();
    }
  }

  /** Answers the heads protocol of every followed database on {@code registry}. */
  public void register(final ProtocolRegistry registry) {
    registry.registerFamily(PREFIX, id -> addressOf(id).flatMap(endpoints).isPresent(),
        installer());
  }

  /** Installs the listener side on a negotiated inbound stream. */
  public ProtocolInstaller installer() {
    return (channel, protocol) -> {
      final Optional<HeadsEndpoint> endpoint = addressOf(protocol).flatMap(endpoints);
      if (endpoint.isEmpty()) {
        // Unfollowed between the match and the install.
        count("closed-unknown-database");
        channel.close();
        return;
      }
      count("streams-inbound");
      install(channel, endpoint.get());
    };
  }

  /**
   * Runs the exchange as dialer: opens {@code /orbitdb/heads/<address>} on {@code connection},
   * then sends and receives heads. Fails with {@code NoSuchProtocolException} when the peer does
   * not have the database open.
   */
  public CompletableFuture<HeadsExchangeResult> exchange(final Connection connection,
      final OrbitDbAddress address, final HeadsEndpoint endpoint) {
    final CompletableFuture<HeadsExchangeResult> result = new CompletableFuture<>();
    count("streams-outbound");
    // Optimistic selection: our first head goes out with the proposal, one round trip sooner
    // than after the echo (a fresh reader waits for it). One frame behind the proposal reaches
    // OrbitDB as one chunk on both JS stacks (the listener hands bytes behind its echo to the
    // protocol); further heads still wait for the peer's first bytes (HeadsExchangeHandler).
    connection.newLazyStream(address.headsProtocolId(), (channel, protocol) ->
        install(channel, endpoint).result().whenComplete((r, e) -> {
          if (e != null) {
            result.completeExceptionally(e);
          } else {
            result.complete(r);
          }
        })).whenComplete((stream, error) -> {
          if (error != null) {
            count("dial-failed");
            result.completeExceptionally(error);
          }
        });
    return result;
  }

  private HeadsExchangeHandler install(final Channel channel, final HeadsEndpoint endpoint) {
    final Connection connection = Connection.of(channel).orElseThrow();
    final HeadsExchangeHandler handler = new HeadsExchangeHandler(endpoint,
        connection.remotePeer(), config, this::count);
    channel.pipeline().addLast("orbitdb-heads", handler);
    return handler;
  }

  private void count(final String name) {
    counters.computeIfAbsent(name, k -> new LongAdder()).increment();
  }

  /**
   * Counters: {@code streams}, {@code streams-inbound}, {@code streams-outbound} (dials,
   * including failed ones), {@code heads-received}, {@code heads-sent},
   * {@code closed-<reason>} ({@code malformed}, {@code oversized}, {@code too-many-heads},
   * {@code timeout}, {@code reset}, …), {@code dial-failed}.
   */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
