package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplicationMetricsTest {
  @Test
  void bounded_shouldFoldPeerChosenTypeNames_whenOpeningFailedOnUnsupportedTypes() {
    final Map<String, Long> out = ReplicationMetrics.bounded(Map.of(
        "replicas.open-failed.unsupported-access-controller.todo-delegation", 2L,
        "replicas.open-failed.unsupported-access-controller.anything-a-peer-says", 3L,
        "replicas.open-failed.malformed", 1L,
        "log.rejected.forged_signature", 4L));
    assertThat(out).containsExactlyInAnyOrderEntriesOf(Map.of(
        "replicas.open-failed.unsupported-access-controller", 5L,
        "replicas.open-failed.malformed", 1L,
        "log.rejected.forged_signature", 4L));
  }
}
