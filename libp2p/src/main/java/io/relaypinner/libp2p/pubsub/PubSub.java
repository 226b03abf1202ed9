package io.relaypinner.libp2p.pubsub;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostListener;
import io.relaypinner.libp2p.host.PeerInboundQueue;
import io.relaypinner.libp2p.protocol.identify.IdentifyResult;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.RPC;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * opens its stream to us), send all our subscriptions first, and read the peer's stream. A
 * stream that ends while the connection lives is reopened. RPCs to a peer whose stream is not
 * writable are queued up to {@link GossipsubConfig#maxQueuedBytesPerPeer()}; beyond that
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
  private static final long REOPEN_DELAY_MILLIS = 1_000;

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


  /** Our side of one peer: confined to the loop. */
  private static final class Session {
    private Channel outbound;
    private boolean opening;
    private int failedOpens;
    private final ArrayDeque<RPC> queue = new ArrayDeque<>();
    private long queuedBytes;
  }

  private final Host host;
  private final GossipsubConfig config;
  private final EventExecutor loop;
  private final GossipsubEngine engine;
  private final Map<PeerId, Session> sessions = new HashMap<>();
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
  private ScheduledFuture<?> heartbeat;
  private volatile boolean closed;

  private PubSub(final Host host, final GossipsubConfig config, final Clock clock,
      final Random random) {
    this.host = host;
    this.config = config;
    this.loop = host.eventLoops().group().next();
    this.engine = new GossipsubEngine(host.identity(), config, clock, random, new EngineOutput());
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
    final PubSub pubsub = new PubSub(host, config, clock, random);
    pubsub.register();
    return pubsub;
  }

  private void register() {
    for (final String id : GossipsubProtocol.PROTOCOL_IDS) {
      host.protocols().register(id, (stream, protocol) -> {
        final Connection connection = Connection.of(stream).orElseThrow();
        final PeerId peer = connection.remotePeer();
        // Flow control: the peer's streams stop reading (so yamux stops granting window) while
        // its budget of decoded messages waiting, over all its streams and protocols, is full.
        final PeerInboundQueue queue = connection.inboundQueue();
        GossipsubProtocol.installInbound(stream, config.maxRpcSize(), rpc -> {
          final Runnable release = queue.admit(stream, rpc.getSerializedSize());
          if (closed) {
            release.run();
            return;
          }
          loop.execute(() -> {
            try {
              if (!closed) {
                engine.handleRpc(peer, rpc);
              }
            } catch (final RuntimeException e) {
              LOG.warn("gossipsub task failed", e);
            } finally {
              release.run();
            }
            refreshView();
          });
        });
        // As JS does: a peer that talks gossipsub to us gets our stream back.
        onLoop(() -> ensureOutbound(connection));
      });
    }
    host.addListener(new HostListener() {
      @Override
      public void peerIdentified(final Connection connection, final IdentifyResult result) {
        if (GossipsubProtocol.PROTOCOL_IDS.stream().anyMatch(result::supports)) {
          onLoop(() -> ensureOutbound(connection));
        }
      }

      @Override
      public void connectionClosed(final Connection connection) {
        onLoop(() -> connectionGone(connection.remotePeer()));
      }
    });
    for (final Connection connection : host.connections()) {
      final boolean speaks = host.peerStore().get(connection.remotePeer())
          .map(info -> info.protocols().stream()
              .anyMatch(GossipsubProtocol.PROTOCOL_IDS::contains))
          .orElse(false);
      if (speaks) {
        onLoop(() -> ensureOutbound(connection));
      }
    }
    final long interval = config.heartbeatInterval().toMillis();
    // First heartbeat soon after start, as JS (100 ms), then at the interval.
    heartbeat = loop.scheduleAtFixedRate(() -> onLoop(engine::heartbeat),
        Math.min(100, interval), interval, TimeUnit.MILLISECONDS);
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
    closed = true;
    verifier.shutdownNow();
    for (final String id : GossipsubProtocol.PROTOCOL_IDS) {
      host.protocols().unregister(id);
    }
    loop.execute(() -> {
      if (heartbeat != null) {
        heartbeat.cancel(false);
      }
      for (final Session session : sessions.values()) {
        if (session.outbound != null) {
          session.outbound.close();
        }
      }
      sessions.clear();
    });
  }

  // ---------------------------------------------------------------- loop side

  private <T> CompletableFuture<T> call(final Supplier<T> task) {
    final CompletableFuture<T> result = new CompletableFuture<>();
    if (closed) {
      result.completeExceptionally(new IllegalStateException("pubsub is closed"));
      return result;
    }
    loop.execute(() -> {
      final T value;
      try {
        value = task.get();
      } catch (final RuntimeException e) {
        refreshView();
        result.completeExceptionally(e);
        return;
      }
      refreshView();
      result.complete(value);
    });
    return result;
  }

  private void onLoop(final Runnable task) {
    if (closed) {
      return;
    }
    loop.execute(() -> {
      try {
        task.run();
      } catch (final RuntimeException e) {
        LOG.warn("gossipsub task failed", e);
      }
      refreshView();
    });
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

  private void ensureOutbound(final Connection connection) {
    if (closed || !connection.isOpen()) {
      return;
    }
    final PeerId peer = connection.remotePeer();
    final Session session = sessions.computeIfAbsent(peer, p -> new Session());
    if (session.outbound != null || session.opening) {
      return;
    }
    session.opening = true;
    connection.newStream(GossipsubProtocol.PROTOCOL_IDS, (stream, protocol) ->
        GossipsubProtocol.installOutbound(stream,
            channel -> onLoop(() -> drain(peer, channel)),
            channel -> onLoop(() -> outboundEnded(peer, channel))))
        .whenComplete((stream, error) -> onLoop(() -> {
          session.opening = false;
          if (sessions.get(peer) != session) {
            if (stream != null) {
              stream.channel().close();
            }
            return;
          }
          if (error != null || !stream.channel().isActive()) {
            session.failedOpens++;
            count("stream-open-failed");
            LOG.debug("gossipsub stream to {} failed: {}", peer,
                error == null ? "closed at once" : error.toString());
            retryLater(peer, session);
            return;
          }
          session.failedOpens = 0;
          session.outbound = stream.channel();
          count("stream-opened");
          engine.outboundOpened(peer,
              GossipsubProtocol.MESHSUB_1_2.equals(stream.protocol()));
        }));
  }

  private void retryLater(final PeerId peer, final Session session) {
    if (session.failedOpens >= MAX_OPEN_ATTEMPTS) {
      return;
    }
    loop.schedule(() -> onLoop(() -> {
      final Optional<Connection> connection = host.connection(peer);
      if (sessions.get(peer) == session && connection.isPresent()) {
        ensureOutbound(connection.get());
      }
    }), REOPEN_DELAY_MILLIS, TimeUnit.MILLISECONDS);
  }

  private void outboundEnded(final PeerId peer, final Channel channel) {
    final Session session = sessions.get(peer);
    if (session == null || session.outbound != channel) {
      return;
    }
    session.outbound = null;
    session.queue.clear();
    session.queuedBytes = 0;
    count("stream-closed");
    engine.outboundClosed(peer);
    if (!closed && host.connection(peer).isPresent()) {
      retryLater(peer, session);
    }
  }

  private void connectionGone(final PeerId peer) {
    if (host.connection(peer).isPresent()) {
      // Another connection to the peer lives; a stream on the closed one reopens itself.
      return;
    }
    final Session session = sessions.remove(peer);
    if (session != null && session.outbound != null) {
      session.outbound.close();
    }
    engine.removePeer(peer);
  }

  private void send(final PeerId peer, final RPC rpc) {
    final Session session = sessions.get(peer);
    if (session == null || session.outbound == null) {
      count("drop-send-no-stream");
      return;
    }
    if (session.queue.isEmpty() && session.outbound.isWritable()) {
      write(session.outbound, rpc);
      return;
    }
    final int size = rpc.getSerializedSize();
    if (session.queuedBytes + size > config.maxQueuedBytesPerPeer()) {
      if (rpc.getPublishCount() > 0) {
        count("drop-send-queue-full");
        return;
      }
      if (session.queuedBytes + size > 2 * config.maxQueuedBytesPerPeer()) {
        // Even control keeps piling up: the peer does not read. Close; it is reopened later
        // with all subscriptions, and the heartbeat rebuilds the mesh.
        count("stream-closed-slow-peer");
        session.outbound.close();
        return;
      }
    }
    session.queue.add(rpc);
    session.queuedBytes += size;
  }

  private void drain(final PeerId peer, final Channel channel) {
    final Session session = sessions.get(peer);
    if (session == null || session.outbound != channel) {
      return;
    }
    while (!session.queue.isEmpty() && channel.isWritable()) {
      final RPC rpc = session.queue.poll();
      // State first: the write below may fire channelWritabilityChanged synchronously.
      session.queuedBytes -= rpc.getSerializedSize();
      write(channel, rpc);
    }
  }

  private void write(final Channel channel, final RPC rpc) {
    channel.writeAndFlush(Unpooled.wrappedBuffer(rpc.toByteArray())).addListener(f -> {
      if (!f.isSuccess()) {
        count("send-failed");
        LOG.debug("gossipsub write on {} failed: {}", channel, f.cause().toString());
      }
    });
  }

  private void count(final String name) {
    counters.computeIfAbsent(name, n -> new AtomicLong()).incrementAndGet();
  }

  private final class EngineOutput implements GossipsubEngine.Output {
    @Override
    public void send(final PeerId peer, final RPC rpc) {
      PubSub.this.send(peer, rpc);
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
          onLoop(() -> engine.completeValidation(pending, result));
        });
      } catch (final RejectedExecutionException e) {
        count("drop-verify-queue-full");
        loop.execute(() -> engine.abandonValidation(pending));
      }
      return true;
    }
  }
}
