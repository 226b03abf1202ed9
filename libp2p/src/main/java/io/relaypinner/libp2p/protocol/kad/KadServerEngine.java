package io.relaypinner.libp2p.protocol.kad;

import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The server side of {@code /ipfs/kad/1.0.0} (libp2p/specs kad-dht/README.md, "RPC messages"),
 * without Netty: what to answer to each request of a peer.
 *
 * <ul>
 *   <li>FIND_NODE: the k peers of the routing table closest to the key (never the requester),
 *       with their addresses from the peer store; peers without addresses are left out, as
 *       go-libp2p-kad-dht does. A lookup of our own id also gets us.
 *   <li>GET_PROVIDERS: the providers we hold for the key (a multihash), us first when we hold
 *       the content ({@link #holds}), and the closer peers.
 *   <li>ADD_PROVIDER: stored for the sending peer only: the spec requires a provider's id to be
 *       the sender's, so a peer cannot announce others; entries without addresses are skipped
 *       (as go does). No answer.
 *   <li>PING: answered with PING (deprecated in the spec, still sent by old nodes).
 *   <li>GET_VALUE: we keep no value records (no IPNS, no public keys): answered with closer peers
 *       and no record, which is what a node without the record says, so the asker's lookup goes
 *       on elsewhere. PUT_VALUE is refused: no answer and the stream is closed, which the sender
 *       counts as a failed store.
 * </ul>
 *
 * <p>Every request first takes a token from a per-peer bucket (the per-peer table holds the
 * {@link KadConfig#maxRatedPeers} most recently seen peers) and, unless the peer is in our
 * routing table, from a global one; a refused request closes its stream unanswered. Each refusal is counted by reason. Time from an injected {@link Clock}.
 * Thread-safe.
 */
public final class KadServerEngine {
  /** Why a request was not answered; counted. */
  public enum Refusal {
    PEER_RATE, GLOBAL_RATE, VALUE_RECORD, BAD_KEY, UNKNOWN_TYPE, MALFORMED, NOT_SENDER;

    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * What to do with a request: send {@code response} (null: nothing) and then keep the stream for
   * the next request, unless {@code close}.
   */
  public record Answer(KadMessage response, boolean close, Refusal refusal) {
    static Answer reply(final KadMessage response) {
      return new Answer(response, false, null);
    }

    static final Answer NONE = new Answer(null, false, null);
  }

  private final KadConfig config;
  private final Clock clock;
  private final PeerId self;
  private final RoutingTable table;
  private final ProviderStore providers;
  private final Function<PeerId, List<Multiaddr>> addresses;
  private final Supplier<List<Multiaddr>> ownAddresses;
  /** Whether we hold the content of a key ourselves (answered as a provider; default: never). */
  private volatile Predicate<byte[]> holds = key -> false;
  private final TokenBucket global;
  private final LinkedHashMap<PeerId, TokenBucket> perPeer;
  private final Map<String, AtomicLong> counters = new TreeMap<>();

  /**
   * @param addresses what the peer store knows of a peer's addresses
   * @param ownAddresses the addresses we advertise (for a FIND_NODE of our own id, and as a
   *     provider of what we hold)
   */
  public KadServerEngine(final KadConfig config, final Clock clock, final RoutingTable table,
      final ProviderStore providers, final Function<PeerId, List<Multiaddr>> addresses,
      final Supplier<List<Multiaddr>> ownAddresses) {
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.table = Objects.requireNonNull(table, "table");
    this.self = table.self();
    this.providers = Objects.requireNonNull(providers, "providers");
    this.addresses = Objects.requireNonNull(addresses, "addresses");
    this.ownAddresses = Objects.requireNonNull(ownAddresses, "ownAddresses");
    this.global = new TokenBucket(config.globalRequestsPerSecond(),
        config.globalRequestsPerSecond(), clock.millis());
    this.perPeer = new LinkedHashMap<>(64, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(final Map.Entry<PeerId, TokenBucket> eldest) {
        return size() > config.maxRatedPeers();
      }
    };
    for (final KadMessage.Type type : KadMessage.Type.values()) {
      counters.put("request_" + type.name().toLowerCase(Locale.ROOT), new AtomicLong());
    }
    for (final Refusal refusal : Refusal.values()) {
      counters.put("refused_" + refusal.label(), new AtomicLong());
    }
    // Every key exists from the start: the map is read and incremented without the lock.
    for (final ProviderStore.Result result : ProviderStore.Result.values()) {
      counters.put("provider_" + result.label(), new AtomicLong());
    }
  }

  public KadConfig config() {
    return config;
  }

  /**
   * Tells the engine which keys (multihash bytes) we hold ourselves: GET_PROVIDERS for them lists
   * us first, with our advertised addresses, as go-libp2p-kad-dht does for what it provides. No
   * record is stored for that, so providing many keys costs the store nothing. Called on every
   * GET_PROVIDERS: must be cheap and thread-safe.
   */
  public void holds(final Predicate<byte[]> holds) {
    this.holds = Objects.requireNonNull(holds, "holds");
  }

  /** Answers one request of {@code from}. */
  public Answer handle(final PeerId from, final KadMessage request) {
    counters.get("request_" + request.type().name().toLowerCase(Locale.ROOT)).incrementAndGet();
    synchronized (this) {
      final long now = clock.millis();
      final TokenBucket peer = perPeer.computeIfAbsent(from, p -> new TokenBucket(
          config.peerRequestBurst(), config.peerRequestsPerSecond(), now));
      if (!peer.take(now)) {
        return refuse(Refusal.PEER_RATE);
      }
      // Peers of our routing table (DHT servers that passed its liveness replacement, at most k
      // per bucket) are not held by the global bucket: a storm of fresh PeerIds can use it up,
      // and the lookups that go through us must still be answered.
      if (!table.contains(from) && !global.take(now)) {
        return refuse(Refusal.GLOBAL_RATE);
      }
    }
    return switch (request.type()) {
      case FIND_NODE -> Answer.reply(new KadMessage(KadMessage.Type.FIND_NODE, request.key(),
          closer(from, request.key()), List.of(), false));
      case GET_PROVIDERS -> getProviders(from, request);
      case ADD_PROVIDER -> addProvider(from, request);
      case PING -> Answer.reply(KadMessage.request(KadMessage.Type.PING, new byte[0]));
      case GET_VALUE -> Answer.reply(new KadMessage(KadMessage.Type.GET_VALUE, request.key(),
          closer(from, request.key()), List.of(), false));
      case PUT_VALUE -> refuse(Refusal.VALUE_RECORD);
      case UNKNOWN -> refuse(Refusal.UNKNOWN_TYPE);
    };
  }

  /** Counts a request that could not be decoded (its stream is closed by the caller). */
  public void malformed() {
    counters.get("refused_" + Refusal.MALFORMED.label()).incrementAndGet();
  }

  private Answer refuse(final Refusal refusal) {
    counters.get("refused_" + refusal.label()).incrementAndGet();
    return new Answer(null, true, refusal);
  }

  private Answer getProviders(final PeerId from, final KadMessage request) {
    final byte[] key = request.key();
    if (!isMultihash(key)) {
      return refuse(Refusal.BAD_KEY);
    }
    final List<KadPeer> found = new ArrayList<>();
    if (holds.test(key)) {
      found.add(new KadPeer(self, ownAddresses.get()));
    }
    for (final KadPeer provider : providers.providers(key, config.providersPerAnswer())) {
      if (found.size() < config.providersPerAnswer() && !provider.id().equals(self)) {
        found.add(provider);
      }
    }
    return Answer.reply(new KadMessage(KadMessage.Type.GET_PROVIDERS, key, closer(from, key),
        found, false));
  }

  private Answer addProvider(final PeerId from, final KadMessage request) {
    final byte[] key = request.key();
    if (!isMultihash(key)) {
      return refuse(Refusal.BAD_KEY);
    }
    for (final KadPeer provider : request.providerPeers()) {
      if (!provider.id().equals(from)) {
        counters.get("refused_" + Refusal.NOT_SENDER.label()).incrementAndGet();
        continue;
      }
      if (provider.addresses().isEmpty()) {
        continue;
      }
      final ProviderStore.Result result = providers.add(key, provider);
      counters.get("provider_" + result.label()).incrementAndGet();
    }
    return Answer.NONE;
  }

  /** The closest known peers with addresses, never the requester; us when the key is our id. */
  private List<KadPeer> closer(final PeerId from, final byte[] key) {
    final List<KadPeer> out = new ArrayList<>();
    if (Arrays.equals(key, self.bytes())) {
      out.add(new KadPeer(self, ownAddresses.get()));
    }
    // One more than k: the requester may be among them.
    for (final PeerId peer : table.closest(KadKey.of(key), config.k() + 1)) {
      if (out.size() >= config.k()) {
        break;
      }
      if (peer.equals(from)) {
        continue;
      }
      final List<Multiaddr> known = addresses.apply(peer);
      if (!known.isEmpty()) {
        out.add(new KadPeer(peer, known.size() <= config.maxAddressesPerPeer() ? known
            : known.subList(0, config.maxAddressesPerPeer())));
      }
    }
    return out;
  }

  private static boolean isMultihash(final byte[] key) {
    try {
      return Multihash.decode(key).encodedLength() == key.length;
    } catch (final IllegalArgumentException e) {
      return false;
    }
  }

  /** {@code request_<type>}, {@code refused_<reason>}, {@code provider_<result>}. */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  /** Peers whose rate is tracked now (bounded by {@link KadConfig#maxRatedPeers}). */
  public synchronized int ratedPeers() {
    return perPeer.size();
  }

  /** A token bucket on millisecond timestamps; guarded by the engine. */
  private static final class TokenBucket {
    private final double capacity;
    private final double perMilli;
    private double tokens;
    private long last;

    TokenBucket(final int capacity, final int perSecond, final long now) {
      this.capacity = capacity;
      this.perMilli = perSecond / 1000.0;
      this.tokens = capacity;
      this.last = now;
    }

    boolean take(final long now) {
      if (now > last) {
        tokens = Math.min(capacity, tokens + (now - last) * perMilli);
        last = now;
      }
      if (tokens < 1) {
        return false;
      }
      tokens -= 1;
      return true;
    }
  }
}
