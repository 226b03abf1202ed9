package io.relaypinner.libp2p.protocol.kad;

import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The client side of the DHT (libp2p/specs kad-dht/README.md), without Netty: the operations
 * built on {@link KadLookup}, and the routing table's upkeep from what lookups see.
 *
 * <ul>
 *   <li>{@link #closestPeers}: GET_CLOSEST_PEERS, a FIND_NODE lookup.
 *   <li>{@link #findProviders}: a GET_PROVIDERS lookup that stops once enough providers are known
 *       (our own provider store counts).
 *   <li>{@link #provide}: the closest peers of the key, then ADD_PROVIDER with our addresses to
 *       each of the k closest.
 *   <li>{@link #refresh}: a lookup of a random key in each bucket not looked up in within the
 *       refresh interval, and of our own id (which fills the deepest buckets).
 * </ul>
 *
 * <p>Peers that answer a request are offered to the routing table; when their bucket is full, its
 * least recently seen peer is pinged and replaced if it does not answer. Thread-safe.
 */
public final class KadClient {
  /** What a provide did: ADD_PROVIDER sent to {@code sent} peers, {@code failed} failed. */
  public record ProvideResult(int closest, int sent, int failed) {}

  private final KadConfig config;
  private final RoutingTable table;
  private final ProviderStore store;
  private final KadLookup.Network network;
  private final KadLookup.Timer timer;
  private final Function<PeerId, List<Multiaddr>> addresses;
  private final KadLookup.Listener listener = new TableUpkeep();
  private final Map<String, AtomicLong> counters = new TreeMap<>();

  /**
   * @param addresses what the peer store knows of a peer's addresses (for the lookup seeds)
   */
  public KadClient(final KadConfig config, final RoutingTable table, final ProviderStore store,
      final KadLookup.Network network, final KadLookup.Timer timer,
      final Function<PeerId, List<Multiaddr>> addresses) {
    this.config = Objects.requireNonNull(config, "config");
    this.table = Objects.requireNonNull(table, "table");
    this.store = Objects.requireNonNull(store, "store");
    this.network = Objects.requireNonNull(network, "network");
    this.timer = Objects.requireNonNull(timer, "timer");
    this.addresses = Objects.requireNonNull(addresses, "addresses");
    for (final String name : List.of("lookups", "lookups_timed_out", "requests_failed",
        "provides", "add_provider_sent", "add_provider_failed", "pings", "pings_failed")) {
      counters.put(name, new AtomicLong());
    }
  }

  /** Where requests go (the reprovider sends its ADD_PROVIDERs through it). */
  KadLookup.Network network() {
    return network;
  }

  public RoutingTable table() {
    return table;
  }

  /** The k closest peers to {@code key} that answered. */
  public CompletableFuture<KadLookup.Result> closestPeers(final byte[] key) {
    return lookup(KadMessage.Type.FIND_NODE, key, 0, List.of());
  }

  /**
   * Providers of {@code key} (a multihash's bytes): ours first, then the DHT's, until
   * {@code wanted} are known or the lookup ends.
   */
  public CompletableFuture<KadLookup.Result> findProviders(final byte[] key, final int wanted) {
    if (wanted < 1) {
      throw new IllegalArgumentException("wanted providers must be >= 1: " + wanted);
    }
    return lookup(KadMessage.Type.GET_PROVIDERS, key, wanted, store.providers(key, wanted));
  }

  /**
   * Announces {@code self} (our id and the addresses to advertise, best first) as a provider of
   * {@code key} to the k closest peers.
   */
  public CompletableFuture<ProvideResult> provide(final byte[] key, final KadPeer self) {
    counters.get("provides").incrementAndGet();
    final KadMessage add = new KadMessage(KadMessage.Type.ADD_PROVIDER, key, List.of(),
        List.of(self), false);
    return closestPeers(key).thenCompose(found -> {
      final AtomicInteger failures = new AtomicInteger();
      final List<CompletableFuture<?>> sends = new ArrayList<>();
      for (final KadPeer peer : found.closest()) {
        sends.add(network.request(peer, add).handle((ok, error) -> {
          if (error != null) {
            failures.incrementAndGet();
            counters.get("add_provider_failed").incrementAndGet();
          } else {
            counters.get("add_provider_sent").incrementAndGet();
          }
          return null;
        }));
      }
      return CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new))
          .thenApply(x -> new ProvideResult(found.closest().size(),
              found.closest().size() - failures.get(), failures.get()));
    });
  }

  /**
   * Looks up our own id (which fills the deepest buckets), then a random key in each bucket due
   * for refresh (which the first lookup may have made deeper); completes when all have ended.
   */
  public CompletableFuture<Void> refresh(final Random random) {
    return closestPeers(table.self().bytes()).thenCompose(self -> {
      final List<CompletableFuture<KadLookup.Result>> lookups = new ArrayList<>();
      for (final int cpl : table.refreshDue(config.refreshInterval(), config.maxRefreshCpl())) {
        lookups.add(closestPeers(table.randomKeyForBucket(cpl, random)));
      }
      return CompletableFuture.allOf(lookups.toArray(CompletableFuture[]::new));
    });
  }

  /** Offers a peer seen speaking the protocol (identify) to the routing table. */
  public void peerSeen(final KadPeer peer) {
    final RoutingTable.Offer offer = table.offer(peer.id());
    if (offer.outcome() == RoutingTable.Outcome.PENDING) {
      checkLiveness(offer.toCheck());
    }
  }

  private void checkLiveness(final PeerId oldest) {
    counters.get("pings").incrementAndGet();
    final KadPeer peer = new KadPeer(oldest, addresses.apply(oldest));
    CompletableFuture<KadMessage> ping;
    try {
      ping = network.request(peer, KadMessage.request(KadMessage.Type.PING, new byte[0]));
    } catch (final RuntimeException e) {
      ping = CompletableFuture.failedFuture(e);
    }
    final CompletableFuture<KadMessage> answer = ping;
    final Runnable cancel = timer.schedule(() -> answer.completeExceptionally(
        new java.util.concurrent.TimeoutException("ping")), config.requestTimeout());
    answer.whenComplete((message, error) -> {
      cancel.run();
      final boolean alive = error == null && message != null;
      if (!alive) {
        counters.get("pings_failed").incrementAndGet();
      }
      table.livenessChecked(oldest, alive);
    });
  }

  private CompletableFuture<KadLookup.Result> lookup(final KadMessage.Type type,
      final byte[] key, final int wanted, final List<KadPeer> known) {
    counters.get("lookups").incrementAndGet();
    final KadLookup lookup = new KadLookup(config, type, key, table.self(), wanted, network,
        timer, listener);
    lookup.addProviders(known);
    table.lookedUp(lookup.target());
    final List<KadPeer> seeds = new ArrayList<>();
    for (final PeerId peer : table.closest(lookup.target(), config.k())) {
      seeds.add(new KadPeer(peer, addresses.apply(peer)));
    }
    return lookup.start(seeds).whenComplete((result, error) -> {
      if (result != null && result.timedOut()) {
        counters.get("lookups_timed_out").incrementAndGet();
      }
    });
  }

  /** {@code lookups}, {@code provides}, {@code add_provider_sent}, {@code pings}, ... */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  /** Answering peers enter the table; failing ones leave it. */
  private final class TableUpkeep implements KadLookup.Listener {
    @Override
    public void answered(final KadPeer peer) {
      peerSeen(peer);
    }

    @Override
    public void failed(final PeerId peer) {
      counters.get("requests_failed").incrementAndGet();
      table.remove(peer);
    }
  }
}
