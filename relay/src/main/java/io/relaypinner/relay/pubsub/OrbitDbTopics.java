package io.relaypinner.relay.pubsub;

import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.PeerId;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's topic policy: OrbitDB announces every write on a gossipsub topic equal to the
 * database address ({@code /orbitdb/<manifest CID>}), so the relay subscribes to every such topic
 * a connected peer subscribes to and stays subscribed, forwarding messages through its mesh like
 * any gossipsub peer. Followed topics are persisted in the datastore ({@code /relay/topics/...}),
 * so a restart resubscribes, and each newly followed topic is reported to listeners (replication).
 *
 * <p>Only {@code /orbitdb/<valid CID>} topics are followed (others are counted and ignored), and at
 * most {@link #MAX_TOPICS}, so peers cannot make the relay join arbitrary topics without bound.
 */
public final class OrbitDbTopics {
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbTopics.class);
  /** The topic prefix of OrbitDB database addresses. */
  public static final String PREFIX = "/orbitdb/";
  /** Datastore key prefix; the key is this followed by the topic. */
  static final String KEY_PREFIX = "/relay/topics";
  /** Upper bound of followed databases. */
  public static final int MAX_TOPICS = 10_000;

  private final PubSub pubsub;
  private final Datastore datastore;
  private final Executor storage;
  private final Set<String> followed = ConcurrentHashMap.newKeySet();
  private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();
  private final List<Consumer<String>> messageListeners = new CopyOnWriteArrayList<>();
  private final AtomicLong ignored = new AtomicLong();

  /**
   * @param storage runs datastore writes (they may fsync); never an event loop
   */
  public OrbitDbTopics(final PubSub pubsub, final Datastore datastore, final Executor storage) {
    this.pubsub = pubsub;
    this.datastore = datastore;
    this.storage = storage;
  }

  /** Resubscribes the persisted topics, then follows what peers subscribe to from now on. */
  public void start() {
    for (final Datastore.Entry entry : datastore.scan(KEY_PREFIX + PREFIX)) {
      follow(entry.key().substring(KEY_PREFIX.length()), false);
    }
    pubsub.addSubscriptionListener(this::onSubscriptionChange);
    pubsub.addMessageHandler(message -> messageArrived(message.topic()));
    if (!followed.isEmpty()) {
      LOG.info("following {} OrbitDB database topics from the datastore", followed.size());
    }
  }

  /** Called with each topic when the relay starts following it (on a pubsub event loop). */
  public void onFollow(final Consumer<String> listener) {
    listeners.add(listener);
  }

  /**
   * Called with the topic of each message that arrives on a followed database topic (on a pubsub
   * event loop: answer at once). OrbitDB publishes one per write, so this is the sync trigger.
   */
  public void onMessage(final Consumer<String> listener) {
    messageListeners.add(listener);
  }

  private void messageArrived(final String topic) {
    if (!followed.contains(topic)) {
      return;
    }
    for (final Consumer<String> listener : messageListeners) {
      try {
        listener.accept(topic);
      } catch (final RuntimeException e) {
        LOG.warn("topic message listener failed for {}", topic, e);
      }
    }
  }

  /** The topics followed now. */
  public Set<String> followed() {
    return Set.copyOf(followed);
  }

  /** Subscriptions to {@code /orbitdb/} topics that were not database addresses. */
  public long ignoredTopics() {
    return ignored.get();
  }

  private void onSubscriptionChange(final PeerId peer, final String topic,
      final boolean subscribed) {
    if (!subscribed || !topic.startsWith(PREFIX) || followed.contains(topic)) {
      return;
    }
    if (!isDatabaseAddress(topic)) {
      ignored.incrementAndGet();
      LOG.debug("peer {} subscribed to {}, which is not an OrbitDB address; not following",
          peer, topic);
      return;
    }
    follow(topic, true);
  }

  /** {@code /orbitdb/<CID>} with nothing after the CID: the only topics followed and synced. */
  public static boolean isDatabaseAddress(final String topic) {
    if (!topic.startsWith(PREFIX)) {
      return false;
    }
    final String rest = topic.substring(PREFIX.length());
    if (rest.isEmpty() || rest.indexOf('/') >= 0) {
      return false;
    }
    try {
      Cid.parse(rest);
      return true;
    } catch (final MultiformatException e) {
      return false;
    }
  }

  private void follow(final String topic, final boolean persist) {
    if (followed.size() >= MAX_TOPICS) {
      ignored.incrementAndGet();
      LOG.warn("not following {}: already following {} databases", topic, MAX_TOPICS);
      return;
    }
    if (!followed.add(topic)) {
      return;
    }
    pubsub.subscribe(topic).whenComplete((ok, error) -> {
      if (error != null) {
        LOG.warn("subscribing to {} failed: {}", topic, error.toString());
      }
    });
    if (persist) {
      LOG.info("following OrbitDB database {}", topic);
      storage.execute(() -> datastore.put(KEY_PREFIX + topic, new byte[0]));
    }
    for (final Consumer<String> listener : listeners) {
      try {
        listener.accept(topic);
      } catch (final RuntimeException e) {
        LOG.warn("topic listener failed for {}", topic, e);
      }
    }
  }
}
