package io.relaypinner.libp2p.pubsub;

import io.netty.channel.Channel;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.PeerInboundQueue;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.RPC;
import io.relaypinner.libp2p.stream.PeerStreams;
import io.relaypinner.libp2p.stream.ProtocolBinding;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pubsub API of a {@link Host}, routed with gossipsub v1.1/v1.2 (libp2p/specs
 * pubsub/README.md, pubsub/gossipsub/*) and StrictSign, compatible with js-libp2p's gossipsub
 * (stack A {@code @chainsafe/libp2p-gossipsub} 14, stack B {@code @libp2p/gossipsub} 15).
 *
 * <p>One event loop of the host runs the {@link GossipsubEngine}; every method here may be called
 * from any thread and returns at once. Handlers and listeners are called on that loop: they must
 * not block; they may call back into this API (a subscription made from a subscription-change
 * listener is applied right after the event).
 *
 * <p>Per peer, like JS, we open one long-lived outbound stream (on identify, or when the peer
 * opens its stream to us; {@link PeerStreams} in a {@link ProtocolBinding}, both shared with
 * bitswap), send all our subscriptions first, and read the peer's stream. A stream that ends
 * while the connection lives is reopened after 1 s. RPCs to a peer whose stream is not writable
 * are queued up to {@link GossipsubConfig#maxQueuedBytesPerPeer()} (or 8,192 RPCs); beyond that
 * messages to it are dropped (counted {@code drop-send-queue-full}), and at twice that the stream
 * is closed (and later reopened). A peer's streams to us stop being read while its {@link
 * PeerInboundQueue} (decoded messages waiting, over all its streams and protocols) is full.
 *
 * <p>Received messages pass the engine's cheap checks on the loop (rate, size, topic, seen);
 * only then is the signature checked, on one {@code gossipsub-verify} thread with a queue of
 * {@link GossipsubConfig#maxPendingValidations()} (full: dropped, counted {@code
 * drop-verify-queue-full}), and the result goes back to the loop.
 */
public final class PubSub implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PubSub.class);
  /** Consecutive failed opens of our stream to a peer before we wait for the next identify. */
  private static final int MAX_OPEN_ATTEMPTS = 3;
  private static final Duration REOPEN_DELAY = Duration.ofSeconds(1);
  /** RPCs queued per peer besides the byte bound (control RPCs are small and many). */
  private static final int MAX_QUEUED_RPCS = 8_192;

  /** Receives validated messages of subscribed topics. */
  @FunctionalInterface
  public interface MessageHandler {
    void onMessage(ReceivedMessage message);
  }

  /** Receives remote peers' SUB/UNSUB announcements. */
  @FunctionalInterface
  public interface SubscriptionListener {
    void onSubscriptionChange(PeerId peer, String topic, boolean subscribed);
  }



  private final Host host;
  private final GossipsubConfig config;
  private final GossipsubEngine engine;
  /** The ids, our streams, the peers that speak gossipsub, the loop. */
  private final ProtocolBinding<RPC> binding;
  private final PeerStreams<RPC> streams;
  private final List<MessageHandler> handlers = new CopyOnWriteArrayList<>();
  private final List<SubscriptionListener> listeners = new CopyOnWriteArrayList<>();
  private final Map<String, AtomicLong> counters = new ConcurrentHashMap<>();
  /*
   * Views for the query methods, updated on the loop after each engine call for the topics that
   * call changed only (an immutable set per topic; a topic with none is absent).
   */
  private volatile Set<String> topicsView = Set.of();
  private final Map<String, Set<PeerId>> peersView = new ConcurrentHashMap<>();
  private final Map<String, Set<PeerId>> meshView = new ConcurrentHashMap<>();
  private long viewVersion = -1;
  /** Checks message signatures off the I/O loop: one thread (so order holds), bounded queue. */
  private final ThreadPoolExecutor verifier;

  private PubSub(final Host host, final GossipsubConfig config, final Clock clock,
      final Random random, final io.relaypinner.common.budget.Scope sharedTopics) {
    this.host = host;
    this.config = config;
    this.engine = new GossipsubEngine(host.identity(), config, clock, random, new EngineOutput(),
        sharedTopics);
    this.binding = new ProtocolBinding<>(host, new PeerStreams.Options("gossipsub",
        GossipsubProtocol.PROTOCOL_IDS, MAX_QUEUED_RPCS, config.maxQueuedBytesPerPeer(), false,
        false, MAX_OPEN_ATTEMPTS, REOPEN_DELAY, null, false), new StreamPolicy(),
        new StreamEvents(), new BindingOwner());
    this.streams = binding.streams();
    this.verifier = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(config.maxPendingValidations()), runnable -> {
          final Thread thread = new Thread(runnable, "gossipsub-verify");
          thread.setDaemon(true);
          return thread;
        });
  }

  /**
   * Creates the router and registers {@code /meshsub/1.2.0} and {@code /meshsub/1.1.0} on
   * {@code host}; peers already connected and identified get our stream at once.
   */
  public static PubSub start(final Host host, final GossipsubConfig config, final Clock clock,
      final Random random) {
    return start(host, config, clock, random, null);
  }

  /**
   * As above, each peer's topics beyond its guaranteed ones also taken from
   * {@code sharedTopics} (one {@link io.relaypinner.common.budget.Resource#WORK} each: the node
   * budget's {@code gossipsub_topics} scope; null: none).
   */
  public static PubSub start(final Host host, final GossipsubConfig config, final Clock clock,
      final Random random, final io.relaypinner.common.budget.Scope sharedTopics) {
    final PubSub pubsub = new PubSub(host, config, clock, random, sharedTopics);
    pubsub.register();
    return pubsub;
  }

  private void register() {
    binding.start();
    final Duration interval = config.heartbeatInterval();
    // First heartbeat soon after start, as JS (100 ms), then at the interval.
    binding.every(Duration.ofMillis(Math.min(100, interval.toMillis())), interval,
        engine::heartbeat);
  }

  /** What the binding asks of gossipsub: the inbound pipeline, the peers' comings and goings. */
  private final class BindingOwner implements ProtocolBinding.Owner {
    @Override
    public void installInbound(final Channel stream, final String protocol,
        final Connection connection) {
      final PeerId peer = connection.remotePeer();
      GossipsubProtocol.installInbound(stream, config.maxRpcSize(), rpc ->
          binding.deliver(connection, stream, rpc.getSerializedSize(),
              () -> engine.handleRpc(peer, rpc)));
    }

    @Override
    public void peerSpeaks(final PeerId peer) {
      // As JS does: a peer that speaks gossipsub (or talks it to us) gets our stream.
      streams.open(peer);
    }

    @Override
    public void peerGone(final PeerId peer) {
      engine.removePeer(peer);
    }

    @Override
    public void afterTask() {
      refreshView();
    }
  }

  // ---------------------------------------------------------------- API

  /** Subscribes to {@code topic}; completes once SUB and GRAFTs are on their way. */
  public CompletableFuture<Void> subscribe(final String topic) {
    return call(() -> {
      engine.subscribe(topic);
      return null;
    });
  }

  public CompletableFuture<Void> unsubscribe(final String topic) {
    return call(() -> {
      engine.unsubscribe(topic);
      return null;
    });
  }

  /**
   * Publishes {@code data} on {@code topic}, signed with the host's key. Fails with {@link
   * IllegalArgumentException} when {@code data} is over {@link GossipsubConfig#maxMessageSize()},
   * or {@link IllegalStateException} when no peer is subscribed and that is not allowed.
   */
  public CompletableFuture<GossipsubEngine.PublishResult> publish(final String topic,
      final byte[] data) {
    final byte[] copy = data.clone();
    return call(() -> engine.publish(topic, copy));
  }

  public void addMessageHandler(final MessageHandler handler) {
    handlers.add(handler);
  }

  public void addSubscriptionListener(final SubscriptionListener listener) {
    listeners.add(listener);
  }

  /** Topics we subscribe to. */
  public Set<String> topics() {
    return topicsView;
  }

  /** Peers (with our stream open) subscribed to {@code topic}. */
  public Set<PeerId> peers(final String topic) {
    return peersView.getOrDefault(topic, Set.of());
  }

  /** Our mesh for {@code topic}. */
  public Set<PeerId> meshPeers(final String topic) {
    return meshView.getOrDefault(topic, Set.of());
  }

  /** Engine and stream counters by name ({@code drop-*} are drops by reason). */
  public Map<String, Long> counters() {
    final Map<String, Long> all = new TreeMap<>(engine.counters());
    counters.forEach((name, value) -> all.put(name, value.get()));
    return all;
  }

  public GossipsubConfig config() {
    return config;
  }

  /** Unregisters the protocols, stops the heartbeat and closes our streams. */
  @Override
  public void close() {
    verifier.shutdownNow();
    binding.close();
  }

  // ---------------------------------------------------------------- loop side

  private <T> CompletableFuture<T> call(final Supplier<T> task) {
    if (binding.isClosed()) {
      return CompletableFuture.failedFuture(new IllegalStateException("pubsub is closed"));
    }
    return binding.call(task);
  }

  private void refreshView() {
    if (engine.version() == viewVersion) {
      return;
    }
    viewVersion = engine.version();
    topicsView = engine.topics();
    for (final String topic : engine.takeChangedTopics()) {
      update(peersView, topic, engine.peers(topic));
      update(meshView, topic, engine.meshPeers(topic));
    }
  }

  private static void update(final Map<String, Set<PeerId>> view, final String topic,
      final Set<PeerId> peers) {
    if (peers.isEmpty()) {
      view.remove(topic);
    } else {
      view.put(topic, Set.copyOf(peers));
    }
  }

  private void count(final String name) {
    counters.computeIfAbsent(name, n -> new AtomicLong()).incrementAndGet();
  }

  private static final class StreamPolicy implements PeerStreams.Policy<RPC> {
    @Override
    public byte[] encode(final RPC rpc, final String protocol) {
      return rpc.toByteArray();
    }

    @Override
    public int size(final RPC rpc) {
      return rpc.getSerializedSize();
    }

    @Override
    public PeerStreams.Overflow overflow(final RPC rpc) {
      // Messages may be dropped (gossip repairs them); control is kept up to the hard bound,
      // where the stream is closed, reopened later with all subscriptions, and the heartbeat
      // rebuilds the mesh.
      return rpc.getPublishCount() > 0 ? PeerStreams.Overflow.DROP_NEW
          : PeerStreams.Overflow.ACCEPT;
    }
  }

  private final class StreamEvents implements PeerStreams.Events<RPC> {
    @Override
    public void opened(final PeerId peer, final String protocol) {
      count("stream-opened");
      engine.outboundOpened(peer, GossipsubProtocol.MESHSUB_1_2.equals(protocol));
      refreshView();
    }

    @Override
    public void openFailed(final PeerId peer, final Throwable cause) {
      count("stream-open-failed");
    }

    @Override
    public void ended(final PeerId peer) {
      count("stream-closed");
      engine.outboundClosed(peer);
      refreshView();
      if (!binding.isClosed() && host.connection(peer).isPresent()) {
        binding.later(REOPEN_DELAY, () -> streams.open(peer));
      }
    }

    @Override
    public void dropped(final PeerId peer, final RPC rpc, final PeerStreams.Drop reason) {
      switch (reason) {
        case NO_STREAM -> count("drop-send-no-stream");
        case QUEUE_FULL -> count("drop-send-queue-full");
        case SLOW_PEER -> count("stream-closed-slow-peer");
        case WRITE_FAILED -> count("send-failed");
        default -> {
          // Queued when the stream ended or the peer left: its state is resent on reopen.
        }
      }
    }
  }

  private final class EngineOutput implements GossipsubEngine.Output {
    @Override
    public void send(final PeerId peer, final RPC rpc) {
      streams.send(peer, rpc);
    }

    @Override
    public void deliver(final ReceivedMessage message) {
      for (final MessageHandler handler : handlers) {
        try {
          handler.onMessage(message);
        } catch (final RuntimeException e) {
          LOG.warn("pubsub message handler failed on {}", message.topic(), e);
        }
      }
    }

    @Override
    public void subscriptionChanged(final PeerId peer, final String topic,
        final boolean subscribed) {
      for (final SubscriptionListener listener : listeners) {
        try {
          listener.onSubscriptionChange(peer, topic, subscribed);
        } catch (final RuntimeException e) {
          LOG.warn("pubsub subscription listener failed on {}", topic, e);
        }
      }
    }

    @Override
    public boolean validateLater(final GossipsubEngine.PendingValidation pending) {
      try {
        verifier.execute(() -> {
          final StrictSign.Result result = StrictSign.validate(pending.message());
          binding.onLoop(() -> engine.completeValidation(pending, result));
        });
      } catch (final RejectedExecutionException e) {
        count("drop-verify-queue-full");
        binding.onLoopAlways(() -> engine.abandonValidation(pending));
      }
      return true;
    }
  }
}
