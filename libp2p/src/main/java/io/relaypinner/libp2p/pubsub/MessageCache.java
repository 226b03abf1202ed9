package io.relaypinner.libp2p.pubsub;

import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.Message;
import io.relaypinner.multiformats.PeerId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The gossipsub message cache (libp2p/specs pubsub/gossipsub/gossipsub-v1.0.md "Message Cache"):
 * messages of the last {@code length} heartbeats, served to IWANT; ids of the last {@code gossip}
 * heartbeats are advertised in IHAVE. Not thread-safe: owned by the engine.
 */
final class MessageCache {
  private record Entry(MessageId id, String topic) {}

  private final int gossip;
  private final Deque<List<Entry>> windows = new ArrayDeque<>();
  private final Map<MessageId, Message> messages = new HashMap<>();
  /** How often each message was sent to each peer in answer to IWANT. */
  private final Map<MessageId, Map<PeerId, Integer>> iwantCounts = new HashMap<>();
  private final int length;

  MessageCache(final int length, final int gossip) {
    this.length = length;
    this.gossip = gossip;
    windows.addFirst(new ArrayList<>());
  }

  void put(final MessageId id, final Message message) {
    if (messages.putIfAbsent(id, message) == null) {
      windows.peekFirst().add(new Entry(id, message.getTopic()));
    }
  }

  Message get(final MessageId id) {
    return messages.get(id);
  }

  boolean contains(final MessageId id) {
    return messages.containsKey(id);
  }

  /** Counts one IWANT answer to {@code peer}; returns the count including this one. */
  int countIWant(final MessageId id, final PeerId peer) {
    return iwantCounts.computeIfAbsent(id, k -> new HashMap<>()).merge(peer, 1, Integer::sum);
  }

  /** Ids of {@code topic} in the gossip windows, newest first. */
  List<MessageId> gossipIds(final String topic) {
    final List<MessageId> ids = new ArrayList<>();
    int window = 0;
    for (final Iterator<List<Entry>> it = windows.iterator(); it.hasNext() && window < gossip;
        window++) {
      for (final Entry entry : it.next()) {
        if (entry.topic().equals(topic)) {
          ids.add(entry.id());
        }
      }
    }
    return ids;
  }

  /** Topics with ids in the gossip windows. */
  Map<String, Integer> gossipTopics() {
    final Map<String, Integer> topics = new LinkedHashMap<>();
    int window = 0;
    for (final Iterator<List<Entry>> it = windows.iterator(); it.hasNext() && window < gossip;
        window++) {
      for (final Entry entry : it.next()) {
        topics.merge(entry.topic(), 1, Integer::sum);
      }
    }
    return topics;
  }

  /** Starts a new window (at each heartbeat), dropping the oldest beyond {@code length}. */
  void shift() {
    windows.addFirst(new ArrayList<>());
    while (windows.size() > length) {
      for (final Entry entry : windows.removeLast()) {
        messages.remove(entry.id());
        iwantCounts.remove(entry.id());
      }
    }
  }

  int size() {
    return messages.size();
  }
}
