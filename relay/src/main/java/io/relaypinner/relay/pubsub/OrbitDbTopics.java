package io.relaypinner.relay.pubsub;

import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.sync.SyncEngine;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's topic policy and its one pubsub listener. OrbitDB announces every write on a
 * gossipsub topic equal to the database address ({@code /orbitdb/<manifest CID>}); the relay
 * follows such a topic when a connected peer subscribes to it <em>and the database exists</em>:
 *
 * <ul>
 *   <li><b>Admission.</b> A subscription to an unfollowed topic that is a database address
 *       ({@link OrbitDbAddress#tryParse}: base58btc dag-cbor, the one rule; any other
 *       {@code /orbitdb/…} topic, {@code /orbitdb/bafy…} included, is counted
 *       {@code not-an-address} and ignored) and that the operator's {@link TopicPolicy} permits
 *       starts an admission: the database's manifest
 *       and access controller must resolve from connected peers within
 *       {@link Limits#admissionTimeout()} ({@link Admission}). At most
 *       {@link Limits#maxPending()} admissions run at once; a peer's first takes any free slot,
 *       its further ones (up to {@link Limits#maxPendingPerPeer()}) only while more than half
 *       the slots are free. A subscription that cannot start waits in its peer's own queue
 *       ({@link #MAX_QUEUED_PER_PEER}, {@link #MAX_DEFERRED} in all, each holding
 *       {@link #QUEUED_SUBSCRIPTION_BYTES} of the replication memory while it waits; beyond,
 *       refused and counted); the queues are served round-robin, one check per peer and turn,
 *       peers with no failed check first: peers holding thousands of made-up topics cannot delay
 *       another peer's database by more than one round of checks. A peer with
 *       {@link #MAX_FAILED_PER_PEER} subscriptions whose database did not resolve gets no further
 *       checks until one of its subscriptions is admitted. Only an admitted topic
 *       is subscribed, persisted ({@code /relay/topics/...}, resubscribed at restart) and
 *       reported to the {@link Listener}; a successful {@code POST /pinning/sync} admits too
 *       ({@link #followAdmitted}).
 *   <li><b>Probation.</b> A followed database (by any route: a subscription, an explicit sync
 *       or import, or restored at start) that has no verified entry {@link Limits#probation()}
 *       after it was followed is dropped (unsubscribed, forgotten), checked as subscriptions
 *       arrive and as topics are followed.
 *   <li><b>Events.</b> Messages on followed topics and peers subscribing to them go to the
 *       {@link Listener} (replication); nothing else does.
 * </ul>
 *
 * <p>At most {@link Limits#maxFollowed()} databases are followed ({@link #MAX_TOPICS}). Those an
 * explicit sync or import asked for (<em>requested</em>, persisted with a marker) stay until
 * probation drops them. The others (<em>unrequested</em>: a peer subscribed) are bounded per
 * peer ({@link Limits#maxUnrequestedPerPeer()}: a peer's further subscriptions are not checked,
 * {@code peer-share-full}) and, when the bound is reached, a new database takes the place of
 * the least recently active unrequested one (a message or a subscribing peer is activity) if
 * that one has been idle at least {@link Limits#probation()} ({@code evicted-idle}); otherwise
 * the new one is refused ({@code full}). So cheap real databases cannot lock real users out for
 * good: once idle, they make room. Each followed database also holds
 * {@link #FOLLOWED_DATABASE_BYTES} of the node budget's replication memory (when one is given):
 * what its replica, session and bookkeeping keep in the heap. With the launcher's heap that,
 * not {@link #MAX_TOPICS}, is the bound, and it is met the same way (evict an idle one, or
 * refuse: {@code full}, and the budget counts the refusal; one log line a minute at most says
 * how many were refused). Persisted topics that are not database
 * addresses (written before the rule was one) are skipped at start, with one log line. Timeouts
 * and retries run on a {@link SyncEngine.Timer}, probation on the {@link Clock}. Thread-safe;
 * pubsub calls arrive on event loops and only queue work.
 */
public final class OrbitDbTopics {
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbTopics.class);
  /** The topic prefix of OrbitDB database addresses. */
  public static final String PREFIX = OrbitDbAddress.PREFIX;
  /** Datastore key prefix; the key is this followed by the topic. */
  static final String KEY_PREFIX = "/relay/topics";
  /** Upper bound of followed databases (the default of {@link Limits#maxFollowed()}). */
  public static final int MAX_TOPICS = 10_000;
  /**
   * Unrequested databases (followed because a peer subscribed, not asked for by sync or import)
   * that one peer's subscriptions may hold followed at once: a tenth of {@link #MAX_TOPICS}.
   */
  public static final int MAX_UNREQUESTED_PER_PEER = 1_000;
  /**
   * Heap one followed database keeps while followed, reserved from the replication memory: its
   * open log replica, sync session, topic and bookkeeping. Measured with the soak's honest
   * databases (20 entries, a file each; docs/benchmarks.md "Soak", 2026-11): heap after GC grew
   * by about 14 KiB per followed database beyond the bounded identity caches; rounded up for
   * longer logs' heads and peers.
   */
  public static final long FOLLOWED_DATABASE_BYTES = 24 * 1024;
  /** Persisted value of a requested database's key (an unrequested one's is empty). */
  private static final byte[] REQUESTED = {'r'};
  /** Checks of one subscription's database before it is given up (until a new subscription). */
  static final int ADMISSION_ATTEMPTS = 3;
  /**
   * Subscriptions of one peer whose database did not resolve, after which its further
   * subscriptions are not checked (a peer subscribing to thousands of made-up topics costs one
   * counter each, not a manifest fetch and its retries).
   */
  static final int MAX_FAILED_PER_PEER = 16;
  /** Peers whose failed admissions are remembered. */
  static final int MAX_TRACKED_PEERS = 4_096;
  /**
   * Subscriptions waiting for an admission slot, over all peers: started as slots free up (the
   * peers' queues round-robin), if the peer is still subscribed. Beyond it a subscription is
   * refused ({@code pending-full}).
   */
  static final int MAX_DEFERRED = 1_024;
  /**
   * Subscriptions one peer may have waiting for a slot; beyond, its subscriptions are refused
   * ({@code peer-pending-full}). A peer subscribing to thousands of topics costs a queue this
   * long and one turn per round, so it cannot delay another peer's database by more than a
   * round of checks.
   */
  static final int MAX_QUEUED_PER_PEER = 16;
  /**
   * Heap one waiting subscription keeps, reserved from the replication memory while it waits
   * (when a budget is given): its topic (about 60 characters), its {@code Deferred}, its slots
   * in its peer's queue and in the queued-topics index; about 180 B, rounded up. A refusal is
   * answered as {@link #MAX_DEFERRED} is ({@code pending-full}).
   */
  static final long QUEUED_SUBSCRIPTION_BYTES = 256;
  /**
   * Heap one peer's queue keeps while it holds a subscription (its map entry, the deque and its
   * array of {@link #MAX_QUEUED_PER_PEER}), reserved with the queue's first subscription and
   * given back with its last.
   */
  static final long PEER_QUEUE_BYTES = 256;
  /** At most one log line per this about databases refused at the followed-database bound. */
  static final Duration FULL_LOG_INTERVAL = Duration.ofMinutes(1);
  /** Wait before the second check; the third waits twice as long. */
  static final Duration ADMISSION_RETRY_DELAY = Duration.ofSeconds(2);

  /** What replication hears from the followed topics. */
  public interface Listener {
    /** The relay follows {@code topic} now (admitted, or resubscribed at start). */
    void onFollow(String topic);

    /** The relay stopped following {@code topic} (probation ended without an entry). */
    void onUnfollow(String topic);

    /** A message on a followed topic (on an event loop: answer at once). */
    void onMessage(String topic, byte[] data, PeerId from);

    /** A peer subscribed to a followed topic (on an event loop). */
    void onPeerSubscribed(String topic, PeerId peer);
  }

  /** The pubsub calls the topics make ({@link #of(PubSub)} in the relay; a fake in tests). */
  interface Gossip {
    void addSubscriptionListener(PubSub.SubscriptionListener listener);

    void addMessageHandler(PubSub.MessageHandler handler);

    CompletableFuture<Void> subscribe(String topic);

    CompletableFuture<Void> unsubscribe(String topic);

    /** Peers subscribed to {@code topic} now. */
    Set<PeerId> peers(String topic);

    static Gossip of(final PubSub pubsub) {
      Objects.requireNonNull(pubsub, "pubsub");
      return new Gossip() {
        @Override
        public void addSubscriptionListener(final PubSub.SubscriptionListener listener) {
          pubsub.addSubscriptionListener(listener);
        }

        @Override
        public void addMessageHandler(final PubSub.MessageHandler handler) {
          pubsub.addMessageHandler(handler);
        }

        @Override
        public CompletableFuture<Void> subscribe(final String topic) {
          return pubsub.subscribe(topic);
        }

        @Override
        public CompletableFuture<Void> unsubscribe(final String topic) {
          return pubsub.unsubscribe(topic);
        }

        @Override
        public Set<PeerId> peers(final String topic) {
          return pubsub.peers(topic);
        }
      };
    }
  }

  /** Whether a database exists as far as the relay can tell. */
  public interface Admission {
    /** Completes true once the manifest and the access controller of {@code topic} resolved. */
    CompletableFuture<Boolean> admit(String topic);

    /** Whether the followed database has at least one verified entry. */
    boolean hasEntries(String topic);
  }

  /**
   * Bounds of admission.
   *
   * @param maxPending admissions running at once in all
   * @param maxPendingPerPeer admissions started by one peer's subscriptions running at once
   * @param admissionTimeout how long a manifest and controller may take to resolve
   * @param probation how long an admitted database may stay without a verified entry; also
   *     how long an unrequested database must have been idle before a new one may evict it
   * @param maxFollowed databases followed at most ({@link #MAX_TOPICS})
   * @param maxUnrequestedPerPeer databases one peer's subscriptions may have admitted and
   *     followed at once ({@link #MAX_UNREQUESTED_PER_PEER})
   */
  public record Limits(int maxPending, int maxPendingPerPeer, Duration admissionTimeout,
      Duration probation, int maxFollowed, int maxUnrequestedPerPeer) {
    /**
     * 32 admissions, 4 per peer, 10 s each, 10 minutes of probation, 10,000 databases, 1,000
     * of them unrequested per peer.
     */
    public static final Limits DEFAULT = new Limits(32, 4, Duration.ofSeconds(10),
        Duration.ofMinutes(10));

    public Limits {
      Objects.requireNonNull(admissionTimeout, "admissionTimeout");
      Objects.requireNonNull(probation, "probation");
      if (maxPending < 1 || maxPendingPerPeer < 1 || maxFollowed < 1
          || maxUnrequestedPerPeer < 1) {
        throw new IllegalArgumentException("admission limits must be positive");
      }
    }

    /** With the default bounds of followed databases. */
    public Limits(final int maxPending, final int maxPendingPerPeer,
        final Duration admissionTimeout, final Duration probation) {
      this(maxPending, maxPendingPerPeer, admissionTimeout, probation, MAX_TOPICS,
          MAX_UNREQUESTED_PER_PEER);
    }
  }

  private final Gossip pubsub;
  private final Datastore datastore;
  private final Executor storage;
  private final TopicPolicy policy;
  private final Limits limits;
  private final Clock clock;
  private final SyncEngine.Timer timer;
  private final Set<String> followed = ConcurrentHashMap.newKeySet();
  /** Topics being admitted, with the peer whose subscription started it. Guarded by this. */
  private final Map<String, PeerId> pending = new HashMap<>();
  private final Map<PeerId, Integer> pendingPerPeer = new HashMap<>();
  /**
   * Subscriptions waiting for a slot, in one queue per peer ({@link #MAX_QUEUED_PER_PEER}),
   * the peers in round-robin order (a peer served goes to the back). Guarded by this.
   */
  private final LinkedHashMap<PeerId, java.util.ArrayDeque<Deferred>> queues =
      new LinkedHashMap<>();
  /** Every queued topic and its peer ({@link #MAX_DEFERRED} in all). Guarded by this. */
  private final Map<String, PeerId> queuedTopics = new HashMap<>();

  /** A subscription waiting for an admission slot: its topic and which check it waits for. */
  private record Deferred(String topic, int attempt) {}
  /**
   * Peers to the number of their subscriptions whose database did not resolve (an LRU of
   * {@link #MAX_TRACKED_PEERS}). Guarded by this.
   */
  private final Map<PeerId, Integer> failedPerPeer = new LinkedHashMap<>(16, 0.75f, true) {
    private static final long serialVersionUID = 1L;

    @Override
    protected boolean removeEldestEntry(final Map.Entry<PeerId, Integer> eldest) {
      return size() > MAX_TRACKED_PEERS;
    }
  };
  /** Followed topics asked for by an explicit sync or import: never evicted. Guarded by this. */
  private final Set<String> requested = new HashSet<>();
  /**
   * Followed unrequested topics to when they were last active (followed, a message, a peer
   * subscribing; clock millis), least recently active first. Guarded by this.
   */
  private final LinkedHashMap<String, Long> unrequested = new LinkedHashMap<>();
  /** Unrequested followed topics to the peer whose subscription admitted them. Guarded by this. */
  private final Map<String, PeerId> admittedBy = new HashMap<>();
  private final Map<PeerId, Integer> unrequestedPerPeer = new HashMap<>();
  /** Followed topics still on probation, to when they were followed (clock millis). */
  private final Map<String, Long> probation = new LinkedHashMap<>();
  /** Probation topics whose check is queued on the storage executor. Guarded by this. */
  private final Set<String> probationChecks = new HashSet<>();
  /** Topics being persisted before they are followed. Guarded by this. */
  private final Set<String> activating = new HashSet<>();
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private volatile Listener listener;
  private volatile Admission admission;
  /** Replication memory each followed database holds {@link #FOLLOWED_DATABASE_BYTES} of. */
  private final Scope memory;
  /** Restored topics the memory had no room for at start (one log line, not one each). */
  private int restoredRefused;
  private boolean restoring;
  /** Databases refused at the bound since the last log line about it. Guarded by this. */
  private int fullSinceLog;
  /** When the next log line about refused databases may be written (clock millis). */
  private long fullLogDue = Long.MIN_VALUE;

  /**
   * @param storage runs datastore writes (they may fsync); never an event loop
   */
  public OrbitDbTopics(final PubSub pubsub, final Datastore datastore, final Executor storage,
      final TopicPolicy policy, final Limits limits, final Clock clock) {
    this(pubsub, datastore, storage, policy, limits, clock, null);
  }

  /**
   * @param storage runs datastore writes (they may fsync); never an event loop
   * @param memory the node budget's replication memory; null: bounded by
   *     {@link Limits#maxFollowed()} only
   */
  public OrbitDbTopics(final PubSub pubsub, final Datastore datastore, final Executor storage,
      final TopicPolicy policy, final Limits limits, final Clock clock, final Scope memory) {
    this(Gossip.of(pubsub), datastore, storage, policy, limits, clock, memory, (task, delay) -> {
      // The JDK's shared delay thread (orTimeout's) hands each task to the common pool.
      final CompletableFuture<Void> due = CompletableFuture.runAsync(task,
          CompletableFuture.delayedExecutor(delay.toNanos(), TimeUnit.NANOSECONDS));
      return () -> due.cancel(false);
    });
  }

  /**
   * @param storage runs datastore writes (they may fsync); never an event loop
   * @param timer runs admission timeouts and retries (tasks must not block)
   */
  OrbitDbTopics(final Gossip pubsub, final Datastore datastore, final Executor storage,
      final TopicPolicy policy, final Limits limits, final Clock clock,
      final SyncEngine.Timer timer) {
    this(pubsub, datastore, storage, policy, limits, clock, null, timer);
  }

  OrbitDbTopics(final Gossip pubsub, final Datastore datastore, final Executor storage,
      final TopicPolicy policy, final Limits limits, final Clock clock, final Scope memory,
      final SyncEngine.Timer timer) {
    this.memory = memory;
    this.pubsub = Objects.requireNonNull(pubsub, "pubsub");
    this.datastore = Objects.requireNonNull(datastore, "datastore");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.policy = Objects.requireNonNull(policy, "policy");
    this.limits = Objects.requireNonNull(limits, "limits");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.timer = Objects.requireNonNull(timer, "timer");
  }

  /**
   * Resubscribes the persisted topics the policy still permits (skipping, with one log line,
   * any that is not a database address), then listens to pubsub.
   *
   * @param events told about followed topics
   * @param check decides admissions
   */
  public void start(final Listener events, final Admission check) {
    this.listener = Objects.requireNonNull(events, "events");
    this.admission = Objects.requireNonNull(check, "check");
    int invalid = 0;
    synchronized (this) {
      restoring = true;
    }
    // Requested databases first: when the memory has no room for every persisted database
    // (a smaller heap than the last run's), the ones a user asked for are the ones kept.
    final List<String> unrequestedTopics = new ArrayList<>();
    for (final Datastore.Entry entry : datastore.scan(KEY_PREFIX + PREFIX)) {
      final String topic = entry.key().substring(KEY_PREFIX.length());
      if (!OrbitDbAddress.isValid(topic)) {
        invalid++;
      } else if (!policy.permits(topic)) {
        count("denied");
      } else if (java.util.Arrays.equals(entry.value(), REQUESTED)) {
        follow(topic, false, true, null);
      } else {
        unrequestedTopics.add(topic);
      }
    }
    for (final String topic : unrequestedTopics) {
      follow(topic, false, false, null);
    }
    final int refused;
    synchronized (this) {
      restoring = false;
      refused = restoredRefused;
    }
    if (refused > 0) {
      LOG.warn("not following {} persisted databases: no room ({} databases at most, {} bytes"
          + " of replication memory each); they stay persisted for a later start", refused,
          limits.maxFollowed(), FOLLOWED_DATABASE_BYTES);
    }
    if (invalid > 0) {
      LOG.warn("not following {} persisted topics under {}: not OrbitDB addresses "
          + "/orbitdb/<base58btc dag-cbor CID>", invalid, KEY_PREFIX);
    }
    pubsub.addSubscriptionListener(this::onSubscriptionChange);
    pubsub.addMessageHandler(message -> {
      if (followed.contains(message.topic())) {
        touch(message.topic());
        listener.onMessage(message.topic(), message.data(), message.receivedFrom());
      }
    });
    if (!followed.isEmpty()) {
      LOG.info("following {} OrbitDB database topics from the datastore", followed.size());
    }
  }

  /** Whether the operator's policy lets the relay follow or sync {@code topic}. */
  public boolean permits(final String topic) {
    return policy.permits(topic);
  }

  /** Whether {@code topic} is followed now (one lookup; {@link #followed()} copies the set). */
  public boolean isFollowed(final String topic) {
    return followed.contains(topic);
  }

  /** The topics followed now. */
  public Set<String> followed() {
    return Set.copyOf(followed);
  }

  /** Subscriptions to {@code /orbitdb/} topics that were not followed (any reason). */
  public long ignoredTopics() {
    long sum = 0;
    for (final String reason : List.of("not-an-address", "denied", "full", "pending-full",
        "peer-pending-full", "peer-failed-full", "peer-share-full", "not-admitted")) {
      final LongAdder n = counters.get(reason);
      sum += n == null ? 0 : n.sum();
    }
    return sum;
  }

  /**
   * Counters: {@code not-an-address}, {@code denied}, {@code full}, {@code pending-full},
   * {@code peer-pending-full}, {@code peer-failed-full}, {@code peer-share-full},
   * {@code not-admitted}, {@code admitted}, {@code deferred} (queued for a slot),
   * {@code dropped-empty}, {@code evicted-idle},
   * {@code persist-rejected}, {@code probation-deferred} (a probation check the storage queue
   * refused: checked at the next sweep).
   */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new java.util.TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  /** Admissions running now. */
  public synchronized int pendingAdmissions() {
    return pending.size();
  }

  private void count(final String name) {
    counters.computeIfAbsent(name, k -> new LongAdder()).increment();
  }

  private void onSubscriptionChange(final PeerId peer, final String topic,
      final boolean subscribed) {
    if (!subscribed || !topic.startsWith(PREFIX)) {
      return;
    }
    if (followed.contains(topic)) {
      touch(topic);
      listener.onPeerSubscribed(topic, peer);
      return;
    }
    if (!OrbitDbAddress.isValid(topic)) {
      count("not-an-address");
      LOG.debug("peer {} subscribed to {}, which is not an OrbitDB address; not following",
          peer, topic);
      return;
    }
    if (!policy.permits(topic)) {
      count("denied");
      return;
    }
    sweepProbation();
    admit(topic, peer, 1);
  }

  /**
   * Checks a topic's database (manifest and controller from the subscribing peer). A check that
   * fails is tried again, at most {@link #ADMISSION_ATTEMPTS} times in all, while that peer is
   * still subscribed: a peer subscribes once, so a check that lost a race (its blocks not served
   * yet, a slow link) would otherwise leave a real database unfollowed for good.
   */
  private void admit(final String topic, final PeerId peer, final int attempt) {
    synchronized (this) {
      if (pending.containsKey(topic) || queuedTopics.containsKey(topic)) {
        return;
      }
      if ((followed.size() + pending.size() + activating.size() >= limits.maxFollowed()
          || memoryShort(pending.size() + 1)) && evictable() == null) {
        refusedFull(topic);
        return;
      }
      if (unrequestedPerPeer.getOrDefault(peer, 0) >= limits.maxUnrequestedPerPeer()) {
        count("peer-share-full");
        return;
      }
      if (failedPerPeer.getOrDefault(peer, 0) >= MAX_FAILED_PER_PEER) {
        count("peer-failed-full");
        return;
      }
      if (!canStart(peer)) {
        // Wait in the peer's own queue (retries too: a check that timed out under load must
        // not lose the database either); queues are served round-robin.
        final java.util.ArrayDeque<Deferred> queue = queues.get(peer);
        if (queue != null && queue.size() >= MAX_QUEUED_PER_PEER) {
          count("peer-pending-full");
        } else if (queuedTopics.size() >= MAX_DEFERRED
            || !reserveQueued(QUEUED_SUBSCRIPTION_BYTES + (queue == null ? PEER_QUEUE_BYTES : 0))) {
          count("pending-full");
        } else {
          queues.computeIfAbsent(peer, p -> new java.util.ArrayDeque<>())
              .add(new Deferred(topic, attempt));
          queuedTopics.put(topic, peer);
          count("deferred");
        }
        return;
      }
      reserve(topic, peer);
    }
    check(topic, peer, attempt);
  }

  /**
   * Whether a check of {@code peer}'s may start now. A peer's first check takes any free slot;
   * its further ones (up to {@link Limits#maxPendingPerPeer()}) only while more than half the
   * slots are free, so peers holding many made-up topics leave slots to a peer that comes later.
   */
  private boolean canStart(final PeerId peer) {
    final int running = pendingPerPeer.getOrDefault(peer, 0);
    final int free = limits.maxPending() - pending.size();
    if (running >= limits.maxPendingPerPeer() || free <= 0) {
      return false;
    }
    return running == 0 || free > limits.maxPending() / 2;
  }

  private void reserve(final String topic, final PeerId peer) {
    pending.put(topic, peer);
    pendingPerPeer.merge(peer, 1, Integer::sum);
  }

  /** Runs the check of a topic whose slot {@link #reserve} took. */
  private void check(final String topic, final PeerId peer, final int attempt) {
    CompletableFuture<Boolean> check;
    try {
      check = admission.admit(topic);
    } catch (final RuntimeException e) {
      check = CompletableFuture.failedFuture(e);
    }
    final CompletableFuture<Boolean> bounded = new CompletableFuture<>();
    final Runnable cancelTimeout = timer.schedule(() -> bounded.completeExceptionally(
        new TimeoutException("admission of " + topic + " took over "
            + limits.admissionTimeout())), limits.admissionTimeout());
    check.whenComplete((ok, error) -> {
      cancelTimeout.run();
      if (error != null) {
        bounded.completeExceptionally(error);
      } else {
        bounded.complete(ok);
      }
    });
    bounded.whenComplete((ok, error) -> {
          release(topic, peer);
          if (error == null && Boolean.TRUE.equals(ok)) {
            count("admitted");
            synchronized (this) {
              // A peer that brought a real database gets its failure budget back.
              failedPerPeer.remove(peer);
            }
            follow(topic, true, false, peer).thenAccept(now -> {
              if (now) {
                listener.onPeerSubscribed(topic, peer);
              }
            });
          } else {
            count("not-admitted");
            if (attempt == 1) {
              synchronized (this) {
                failedPerPeer.merge(peer, 1, Integer::sum);
              }
            }
            LOG.debug("not following {} (subscribed by {}, attempt {}): its manifest and "
                + "controller did not resolve: {}", topic, peer, attempt,
                error == null ? "refused" : error.toString());
            if (attempt < ADMISSION_ATTEMPTS) {
              timer.schedule(() -> retry(topic, peer, attempt + 1),
                  ADMISSION_RETRY_DELAY.multipliedBy(attempt));
            }
          }
          // After the failure is counted: the next turn prefers peers with none.
          startDeferred();
        });
  }

  /** The next check of a subscription's database, on the storage executor. */
  private void retry(final String topic, final PeerId peer, final int attempt) {
    try {
      storage.execute(() -> {
        if (!followed.contains(topic) && pubsub.peers(topic).contains(peer)) {
          admit(topic, peer, attempt);
        }
      });
    } catch (final RejectedExecutionException e) {
      // The storage queue is full: a later subscription checks it again.
      LOG.debug("check {} of {} not retried: the storage queue is full", attempt, topic);
    }
  }

  /**
   * Starts queued checks while slots are free, serving the peers' queues round-robin (one
   * check per peer and turn) and peers none of whose subscriptions failed first; a queued
   * subscription whose peer left the topic is dropped. Checks start on the storage executor:
   * never inside the completing admission's callback.
   */
  private void startDeferred() {
    while (true) {
      final String topic;
      final PeerId peer;
      final int attempt;
      synchronized (this) {
        final PeerId next = nextQueuedPeer();
        if (next == null) {
          return;
        }
        final java.util.ArrayDeque<Deferred> queue = queues.remove(next);
        final Deferred head = queue.poll();
        if (!queue.isEmpty()) {
          queues.put(next, queue);
        }
        queuedTopics.remove(head.topic());
        releaseQueued(QUEUED_SUBSCRIPTION_BYTES + (queue.isEmpty() ? PEER_QUEUE_BYTES : 0));
        if (followed.contains(head.topic()) || !pubsub.peers(head.topic()).contains(next)) {
          continue;
        }
        if (failedPerPeer.getOrDefault(next, 0) >= MAX_FAILED_PER_PEER) {
          count("peer-failed-full");
          continue;
        }
        topic = head.topic();
        peer = next;
        attempt = head.attempt();
        reserve(topic, peer);
      }
      try {
        storage.execute(() -> check(topic, peer, attempt));
      } catch (final RejectedExecutionException e) {
        release(topic, peer);
        count("pending-full");
        return;
      }
    }
  }

  /**
   * The first peer in round-robin order with a queued subscription that may start now,
   * preferring peers with no failed check. Guarded by this.
   */
  private PeerId nextQueuedPeer() {
    if (queues.isEmpty() || pending.size() >= limits.maxPending()) {
      return null;
    }
    PeerId fallback = null;
    for (final PeerId peer : queues.keySet()) {
      if (!canStart(peer)) {
        continue;
      }
      if (!failedPerPeer.containsKey(peer)) {
        return peer;
      }
      if (fallback == null) {
        fallback = peer;
      }
    }
    return fallback;
  }

  private synchronized void release(final String topic, final PeerId peer) {
    pending.remove(topic);
    pendingPerPeer.computeIfPresent(peer, (p, n) -> n <= 1 ? null : n - 1);
  }

  /** Subscriptions waiting for an admission slot now. */
  public synchronized int deferredAdmissions() {
    return queuedTopics.size();
  }

  /**
   * Follows a database that proved to exist another way (a successful {@code POST
   * /pinning/sync} or import), if the policy permits it. Completes true when it is followed
   * (now or already), false when it is not (policy, {@link Limits#maxFollowed()}, storage). A
   * followed database becomes requested: never evicted for a newer one.
   */
  public CompletableFuture<Boolean> followAdmitted(final String topic) {
    if (!OrbitDbAddress.isValid(topic) || !policy.permits(topic)) {
      return CompletableFuture.completedFuture(false);
    }
    if (followed.contains(topic)) {
      markRequested(topic);
      return CompletableFuture.completedFuture(true);
    }
    return follow(topic, true, true, null);
  }

  /** A followed database was asked for (sync, import): never evicted from now on. */
  private void markRequested(final String topic) {
    synchronized (this) {
      if (!followed.contains(topic) || !requested.add(topic)) {
        return;
      }
      forgetUnrequested(topic);
    }
    try {
      storage.execute(() -> {
        if (followed.contains(topic)) {
          datastore.put(KEY_PREFIX + topic, REQUESTED.clone());
        }
      });
    } catch (final RejectedExecutionException e) {
      count("persist-rejected");
    }
  }

  /** Drops {@code topic} from the unrequested bookkeeping. Guarded by this. */
  private void forgetUnrequested(final String topic) {
    unrequested.remove(topic);
    final PeerId by = admittedBy.remove(topic);
    if (by != null) {
      unrequestedPerPeer.computeIfPresent(by, (p, n) -> n <= 1 ? null : n - 1);
    }
  }

  /** A followed topic saw activity (a message, a subscribing peer): it moves to the back. */
  private synchronized void touch(final String topic) {
    if (unrequested.remove(topic) != null) {
      unrequested.put(topic, clock.millis());
    }
  }

  /**
   * The least recently active unrequested database, if it has been idle at least
   * {@link Limits#probation()}: the one a new database may take the place of. Guarded by this.
   */
  private String evictable() {
    if (unrequested.isEmpty()) {
      return null;
    }
    final Map.Entry<String, Long> eldest = unrequested.entrySet().iterator().next();
    return clock.millis() - eldest.getValue() >= limits.probation().toMillis()
        ? eldest.getKey() : null;
  }

  /**
   * Drops followed databases that still have no verified entry after their probation. Called on
   * event loops (a subscription arrives): the due topics are only picked here; whether they have
   * an entry is asked on the storage executor ({@link #endProbation}), since the answer may read
   * the datastore (a PostgreSQL round trip on shared stores), which must not stall the gossipsub
   * loop. Due topics are checked in probation order; one the executor refuses stays on probation
   * and is picked again by the next sweep ({@code probation-deferred}).
   */
  private void sweepProbation() {
    final long now = clock.millis();
    final Map<String, Long> due = new LinkedHashMap<>();
    synchronized (this) {
      for (final Map.Entry<String, Long> e : probation.entrySet()) {
        if (now - e.getValue() < limits.probation().toMillis()) {
          break;
        }
        if (probationChecks.add(e.getKey())) {
          due.put(e.getKey(), e.getValue());
        }
      }
    }
    if (due.isEmpty()) {
      return;
    }
    try {
      storage.execute(() -> endProbation(due));
    } catch (final RejectedExecutionException e) {
      synchronized (this) {
        probationChecks.removeAll(due.keySet());
      }
      count("probation-deferred");
    }
  }

  /**
   * On the storage executor: ends the probation of each due topic (followed since
   * {@code due}'s time), dropping those without a verified entry. A topic unfollowed or
   * followed anew since it was picked is left alone; one whose check fails (a store down) stays
   * on probation for the next sweep.
   */
  private void endProbation(final Map<String, Long> due) {
    for (final Map.Entry<String, Long> e : due.entrySet()) {
      final String topic = e.getKey();
      boolean empty = false;
      boolean checked = false;
      try {
        empty = followed.contains(topic) && !admission.hasEntries(topic);
        checked = true;
      } catch (final RuntimeException failure) {
        LOG.debug("probation check of {} failed, checked again later: {}", topic,
            failure.toString());
      } finally {
        synchronized (this) {
          probationChecks.remove(topic);
          if (checked && !probation.remove(topic, e.getValue())) {
            checked = false;
            empty = false;
          }
        }
      }
      if (checked && empty) {
        count("dropped-empty");
        LOG.info("no longer following {}: no verified entry {} after it was admitted", topic,
            limits.probation());
        unfollow(topic);
      }
    }
  }

  private void unfollow(final String topic) {
    synchronized (this) {
      if (!followed.remove(topic)) {
        return;
      }
      releaseMemory();
      probation.remove(topic);
      requested.remove(topic);
      forgetUnrequested(topic);
    }
    pubsub.unsubscribe(topic);
    try {
      storage.execute(() -> datastore.delete(KEY_PREFIX + topic));
    } catch (final RejectedExecutionException e) {
      count("persist-rejected");
    }
    listener.onUnfollow(topic);
  }

  /**
   * Follows {@code topic}: persisted first ({@code persist}), and only then subscribed, put on
   * probation and reported to the listener, so a followed topic is always persisted and synced.
   * Completes true when it was not followed before and is now; a full {@link #MAX_TOPICS}, a
   * storage queue that refuses the write or a failed write leave it not followed (counted).
   */
  private CompletableFuture<Boolean> follow(final String topic, final boolean persist,
      final boolean asked, final PeerId by) {
    String evict = null;
    synchronized (this) {
      if (followed.contains(topic) || activating.contains(topic)) {
        return CompletableFuture.completedFuture(false);
      }
      final boolean atCount = followed.size() + activating.size() >= limits.maxFollowed();
      if (atCount || !reserveMemory()) {
        evict = evictable();
        if (evict == null) {
          if (restoring) {
            count("full");
            restoredRefused++;
          } else {
            refusedFull(topic);
          }
          return CompletableFuture.completedFuture(false);
        }
        // Taken out of the bookkeeping now, so no other follow picks it too; its memory is
        // given back when it is unfollowed, just below.
        forgetUnrequested(evict);
        if (memory != null) {
          memory.force(Resource.MEMORY, FOLLOWED_DATABASE_BYTES);
        }
      }
      activating.add(topic);
    }
    if (evict != null) {
      count("evicted-idle");
      LOG.info("no longer following {}: the least recently active database nobody asked for, "
          + "making room for {}", evict, topic);
      unfollow(evict);
    }
    if (!persist) {
      activate(topic, asked, by);
      return CompletableFuture.completedFuture(true);
    }
    final CompletableFuture<Boolean> done = new CompletableFuture<>();
    try {
      storage.execute(() -> {
        try {
          datastore.put(KEY_PREFIX + topic, asked ? REQUESTED.clone() : new byte[0]);
        } catch (final RuntimeException e) {
          abandon(topic, "persist-failed");
          LOG.warn("not following {}: it could not be persisted: {}", topic, e.toString());
          done.complete(false);
          return;
        }
        LOG.info("following OrbitDB database {}", topic);
        activate(topic, asked, by);
        done.complete(true);
      });
    } catch (final RejectedExecutionException e) {
      // Not persisted means not followed: the next subscription tries again.
      abandon(topic, "persist-rejected");
      LOG.warn("not following {}: the storage queue is full", topic);
      done.complete(false);
    }
    return done;
  }

  private synchronized void abandon(final String topic, final String counter) {
    if (activating.remove(topic)) {
      releaseMemory();
    }
    count(counter);
  }

  /**
   * Counts a database refused at the bound of followed databases ({@code full}) and writes at
   * most one log line per {@link #FULL_LOG_INTERVAL} about it, saying how many were refused
   * since the last line: at the bound, every subscription to a new database is refused, and a
   * line each would flood the log. Guarded by this.
   */
  private void refusedFull(final String topic) {
    count("full");
    fullSinceLog++;
    final long now = clock.millis();
    if (now < fullLogDue) {
      return;
    }
    LOG.info("not following {} databases since the last such line (the last: {}): the bound of"
        + " followed databases is reached ({} followed, at most {}; replication memory {}),"
        + " and none nobody asked for has been idle {}", fullSinceLog, topic,
        followed.size() + activating.size(), limits.maxFollowed(),
        memory == null ? "unbounded" : memory.used(Resource.MEMORY) + " of "
            + memory.limits().max(Resource.MEMORY) + " bytes used", limits.probation());
    fullSinceLog = 0;
    fullLogDue = now + FULL_LOG_INTERVAL.toMillis();
  }

  /** Takes a waiting subscription's memory from the budget; true without a budget. */
  private boolean reserveQueued(final long bytes) {
    return memory == null || memory.tryReserve(Resource.MEMORY, bytes);
  }

  private void releaseQueued(final long bytes) {
    if (memory != null) {
      memory.release(Resource.MEMORY, bytes);
    }
  }

  /** Takes one followed database's memory from the budget; true without a budget. */
  private boolean reserveMemory() {
    return memory == null || memory.tryReserve(Resource.MEMORY, FOLLOWED_DATABASE_BYTES);
  }

  private void releaseMemory() {
    if (memory != null) {
      memory.release(Resource.MEMORY, FOLLOWED_DATABASE_BYTES);
    }
  }

  /**
   * Whether the replication memory, by itself, lacks room for {@code databases} more followed
   * databases (a cheap check before an admission starts; the follow reserves).
   */
  private boolean memoryShort(final int databases) {
    return memory != null
        && memory.available(Resource.MEMORY) < databases * FOLLOWED_DATABASE_BYTES;
  }

  /** The topic is persisted (or restored): subscribe, start its probation, tell replication. */
  private void activate(final String topic, final boolean asked, final PeerId by) {
    synchronized (this) {
      activating.remove(topic);
      followed.add(topic);
      probation.put(topic, clock.millis());
      if (asked) {
        requested.add(topic);
      } else {
        unrequested.put(topic, clock.millis());
        if (by != null) {
          admittedBy.put(topic, by);
          unrequestedPerPeer.merge(by, 1, Integer::sum);
        }
      }
    }
    pubsub.subscribe(topic).whenComplete((ok, error) -> {
      if (error != null) {
        LOG.warn("subscribing to {} failed: {}", topic, error.toString());
      }
    });
    listener.onFollow(topic);
    sweepProbation();
  }
}
