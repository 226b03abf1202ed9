package io.relaypinner.relay.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class HeadsAnnouncerEpochTest {
  @Test
  void heard_shouldDropAFormerOwnersAnnouncement_whenALaterOwnerAnnounced() {
    final PostgresCoordination.Announcer announcer = new PostgresCoordination.Announcer("me");
    final List<Map.Entry<String, List<String>>> heard = new CopyOnWriteArrayList<>();
    announcer.onAnnounced((address, heads) -> heard.add(Map.entry(address, heads)));
    announcer.heard(PostgresCoordination.Announcer.payload("new", 7, "/orbitdb/x", List.of("h7")));
    // The former owner (epoch 5) woke up after the new owner (epoch 7) announced: dropped.
    announcer.heard(PostgresCoordination.Announcer.payload("old", 5, "/orbitdb/x", List.of("h5")));
    // Another database's epochs are its own; a follower's (no epoch) and an earlier version's
    // payload (the relay alone) are kept; this relay's own are ignored.
    announcer.heard(PostgresCoordination.Announcer.payload("old", 5, "/orbitdb/y", List.of("y")));
    announcer.heard(PostgresCoordination.Announcer.payload("follower", 0, "/orbitdb/x",
        List.of("f")));
    announcer.heard("earlier /orbitdb/x e");
    announcer.heard(PostgresCoordination.Announcer.payload("me", 9, "/orbitdb/x", List.of("m")));
    announcer.heard(PostgresCoordination.Announcer.payload("new", 7, "/orbitdb/x", List.of("h8")));
    assertThat(heard).containsExactly(Map.entry("/orbitdb/x", List.of("h7")),
        Map.entry("/orbitdb/y", List.of("y")), Map.entry("/orbitdb/x", List.of("f")),
        Map.entry("/orbitdb/x", List.of("e")), Map.entry("/orbitdb/x", List.of("h8")));
    assertThat(announcer.staleCount()).isEqualTo(1);
    assertThat(PostgresCoordination.Announcer.payload("r", 0, "/orbitdb/x", List.of()))
        .isEqualTo("r /orbitdb/x");
    assertThat(PostgresCoordination.Announcer.payload("r", 3, "/orbitdb/x", List.of("h")))
        .isEqualTo("r:3 /orbitdb/x h");
  }
}
