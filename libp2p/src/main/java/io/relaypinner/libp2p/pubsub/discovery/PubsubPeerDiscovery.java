package io.relaypinner.libp2p.pubsub.discovery;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.libp2p.pubsub.ReceivedMessage;
import io.relaypinner.libp2p.pubsub.discovery.pb.DiscoveryProtos;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiaddrProtocol;
import io.relaypinner.multiformats.PeerId;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pubsub peer discovery, wire-compatible with js-libp2p {@code @libp2p/pubsub-peer-discovery}
 * 11 and 12: peers publish {@code Peer{publicKey, addrs}} on shared topics; subscribing makes the
 * relay a gossipsub router of those topics, so browsers connected only to the relay find each
 * other through it. The relay announces itself every interval (at most once per interval, only
 * when someone listens, at most {@value #MAX_ADDRS} addresses) with its public addresses.
 *
 * <p>Announcements from others are checked (size, key, the key's peer id equals the message's
 * signer, addresses parse and are not relayed through us) and reported to a listener; nothing is
 * dialled. Counters: {@link #counters()}.
 */
public final class PubsubPeerDiscovery implements AutoCloseable {
  /** Addresses per announcement, ours and theirs. */
  public static final int MAX_ADDRS = 16;
  /** Largest announcement parsed. */
  public static final int MAX_ANNOUNCEMENT_SIZE = 8 * 1024;
  private static final Logger LOG = LoggerFactory.getLogger(PubsubPeerDiscovery.class);

  /** A peer someone announced: its id (from the key) and addresses. */
  public record Discovered(PeerId peer, List<Multiaddr> addresses) {}

  private final PubSub pubsub;
  private final List<String> topics;
  private final PublicKey self;
  private final Supplier<List<Multiaddr>> addresses;
  private final Set<String> topicSet;
  private final Map<String, AtomicLong> counters = new ConcurrentHashMap<>();
  private volatile Consumer<Discovered> listener = d -> { };
  private final ScheduledFuture<?> timer;
  private volatile boolean closed;

  private PubsubPeerDiscovery(final PubSub pubsub, final List<String> topics,
      final PublicKey self, final Supplier<List<Multiaddr>> addresses,
      final ScheduledExecutorService scheduler, final Duration interval) {
    this.pubsub = pubsub;
    this.topics = List.copyOf(topics);
    this.topicSet = Set.copyOf(topics);
    this.self = self;
    this.addresses = addresses;
    for (final String name : List.of("published", "received", "invalid", "self")) {
      counters.put(name, new AtomicLong());
    }
    this.timer = scheduler.scheduleAtFixedRate(this::announce, 0, interval.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /**
   * Joins {@code topics} on {@code pubsub} and announces {@code self} every {@code interval}.
   *
   * @param addresses our public addresses (with or without {@code /p2p}), read at each
   *     announcement
   * @param scheduler runs the announcements (e.g. the host's event loops)
   */
  public static PubsubPeerDiscovery start(final PubSub pubsub, final List<String> topics,
      final PublicKey self, final Supplier<List<Multiaddr>> addresses,
      final ScheduledExecutorService scheduler, final Duration interval) {
    Objects.requireNonNull(pubsub, "pubsub");
    if (interval.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("interval must be at least 1 s: " + interval);
    }
    final PubsubPeerDiscovery discovery = new PubsubPeerDiscovery(pubsub, topics, self,
        addresses, scheduler, interval);
    pubsub.addMessageHandler(discovery::onMessage);
    for (final String topic : topics) {
      pubsub.subscribe(topic);
    }
    return discovery;
  }

  /** Called (on the pubsub loop; must not block) for every valid announcement of another peer. */
  public void onDiscovered(final Consumer<Discovered> listener) {
    this.listener = Objects.requireNonNull(listener, "listener");
  }

  public List<String> topics() {
    return topics;
  }

  /** Our announcement: the bytes published on every topic. */
  public byte[] announcement() {
    final DiscoveryProtos.Peer.Builder peer = DiscoveryProtos.Peer.newBuilder()
        .setPublicKey(ByteString.copyFrom(self.marshal()));
    final Set<Multiaddr> seen = new LinkedHashSet<>();
    final PeerId id = self.peerId();
    for (final Multiaddr address : addresses.get()) {
      if (seen.size() == MAX_ADDRS) {
        break;
      }
      if (seen.add(address.withoutPeerId().withPeerId(id))) {
        peer.addAddrs(ByteString.copyFrom(address.withoutPeerId().withPeerId(id).bytes()));
      }
    }
    return peer.build().toByteArray();
  }

  private void announce() {
    if (closed) {
      return;
    }
    final byte[] data;
    try {
      data = announcement();
    } catch (final RuntimeException e) {
      LOG.warn("pubsub discovery: cannot build our announcement: {}", e.toString());
      return;
    }
    for (final String topic : topics) {
      if (pubsub.peers(topic).isEmpty()) {
        // As JS: nobody to tell.
        continue;
      }
      pubsub.publish(topic, data).whenComplete((result, error) -> {
        if (error == null) {
          counters.get("published").incrementAndGet();
        } else {
          LOG.debug("pubsub discovery: publish on {} failed: {}", topic, error.toString());
        }
      });
    }
  }

  private void onMessage(final ReceivedMessage message) {
    if (!topicSet.contains(message.topic())) {
      return;
    }
    counters.get("received").incrementAndGet();
    final Discovered discovered;
    try {
      discovered = parse(message);
    } catch (final InvalidProtocolBufferException | IllegalArgumentException e) {
      // IllegalArgumentException includes KeyFormatException and MultiformatException.
      counters.get("invalid").incrementAndGet();
      LOG.debug("pubsub discovery: invalid announcement from {}: {}", message.receivedFrom(),
          e.getMessage());
      return;
    }
    if (discovered == null) {
      counters.get("self").incrementAndGet();
      return;
    }
    listener.accept(discovered);
  }

  private Discovered parse(final ReceivedMessage message)
      throws InvalidProtocolBufferException {
    if (message.data().length > MAX_ANNOUNCEMENT_SIZE) {
      throw new IllegalArgumentException("announcement of " + message.data().length + " bytes");
    }
    final DiscoveryProtos.Peer peer = DiscoveryProtos.Peer.parseFrom(message.data());
    final PeerId id = Keys.unmarshalPublicKey(peer.getPublicKey().toByteArray()).peerId();
    if (id.equals(self.peerId())) {
      return null;
    }
    if (message.author() != null && !message.author().equals(id)) {
      throw new IllegalArgumentException("announcement of " + id + " signed by "
          + message.author());
    }
    if (peer.getAddrsCount() > MAX_ADDRS) {
      throw new IllegalArgumentException(peer.getAddrsCount() + " addresses");
    }
    final List<Multiaddr> addrs = peer.getAddrsList().stream()
        .map(bytes -> Multiaddr.fromBytes(bytes.toByteArray()))
        .filter(a -> !a.has(MultiaddrProtocol.P2P_CIRCUIT)
            || a.peerId().map(id::equals).orElse(false))
        .toList();
    return new Discovered(id, addrs);
  }

  /** {@code published}, {@code received}, {@code invalid}, {@code self} announcements. */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  @Override
  public void close() {
    closed = true;
    timer.cancel(false);
  }
}
