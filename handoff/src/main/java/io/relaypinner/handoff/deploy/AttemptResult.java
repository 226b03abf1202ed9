package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Optional;

/**
 * One candidate host tried.
 *
 * @param number the attempt number, from 1
 * @param host the candidate's id
 * @param instanceId the instance created, if any
 * @param ok whether this attempt produced the relay
 * @param stage the stage it ended in (the failing stage for a failed attempt)
 * @param reason why it failed (empty when ok)
 * @param erased whether the failed attempt's instance was erased
 * @param forgotten item hashes of the deployer's records forgotten for it
 * @param cleanupErrors what could not be cleaned up
 */
public record AttemptResult(int number, String host, Optional<String> instanceId, boolean ok,
    String stage, Optional<String> reason, boolean erased, List<String> forgotten,
    List<String> cleanupErrors) {
  public AttemptResult {
    forgotten = List.copyOf(forgotten);
    cleanupErrors = List.copyOf(cleanupErrors);
  }

  public ObjectNode toJson() {
    final ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("attempt", number);
    node.put("host", host);
    node.put("instanceId", instanceId.orElse(null));
    node.put("ok", ok);
    node.put("stage", stage);
    node.put("reason", reason.orElse(null));
    if (!ok) {
      final ObjectNode cleanup = node.putObject("cleanup");
      cleanup.put("erased", erased);
      forgotten.forEach(cleanup.putArray("forgotten")::add);
      cleanupErrors.forEach(cleanup.putArray("errors")::add);
    }
    return node;
  }
}
