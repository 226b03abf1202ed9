package io.relaypinner.relay.sync;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/**
 * The {@code syncQueue} object of spec 2.4, a snapshot of the {@link SyncEngine}.
 *
 * @param waiting syncs queued for a slot
 * @param active syncs running in a slot
 * @param activeTopics the topics holding slots, longest-running first
 * @param queuedTopics topics queued or running (including syncs whose slot was reclaimed on
 *     timeout and that still run); a topic counted here is not enqueued again
 * @param cooldownTopics topics held back after a sync timed out or failed
 * @param timedOutSyncs syncs that exceeded {@code RELAY_PINNING_SYNC_TIMEOUT_MS}, since start
 */
@JsonPropertyOrder({"waiting", "active", "activeTopics", "queuedTopics", "cooldownTopics",
    "timedOutSyncs"})
public record SyncQueueStats(int waiting, int active, List<ActiveTopic> activeTopics,
    int queuedTopics, int cooldownTopics, long timedOutSyncs) {

  public SyncQueueStats {
    activeTopics = List.copyOf(activeTopics);
  }

  /** A topic holding a slot, and for how long. */
  @JsonPropertyOrder({"topic", "runningMs"})
  public record ActiveTopic(String topic, long runningMs) {}
}
