package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.relay.sync.ManualTimer;
import io.relaypinner.relay.testing.MutableClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** {@link HeadsRepublisher} on a fixed clock, a manual timer and a recording publisher. */
class HeadsRepublisherTest {
  private static final OrbitDbAddress DB =
      OrbitDbAddress.parse("/orbitdb/zdpuApYZfhWhK2vQaA9DU2nbbYTxyb2iZ3wxP7TMV1jPn4Zs1");

  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-29T12:00:00Z"));
  private final ManualTimer timer = new ManualTimer(clock);
  private final JavaWriter writer = new JavaWriter();
  /** Topic to the blocks published on it, in order. */
  private final Map<String, List<byte[]>> published = new HashMap<>();
  /** The heads each database has now (clock order). */
  private final Map<OrbitDbAddress, List<byte[]>> heads = new HashMap<>();
  private final Map<String, Long> counters = new TreeMap<>();
  private final HeadsRepublisher republisher = new HeadsRepublisher(
      (topic, block) -> published.computeIfAbsent(topic, t -> new ArrayList<>()).add(block),
      address -> Optional.ofNullable(heads.get(address)), Runnable::run, clock, timer,
      name -> counters.merge(name, 1L, Long::sum));

  private JoinResult added(final OrbitDbAddress address, final int entries) {
    final List<Entry> added = new ArrayList<>();
    for (int i = 0; i < entries; i++) {
      added.add(Entry.decode(writer.entry(address, i + 1, List.of(), List.of(),
          DagCborValue.of("entry " + i))));
    }
    return new JoinResult(added, Map.of(), List.of(), false, Set.of(), List.of(), true, false);
  }

  private static OrbitDbAddress database(final int i) {
    return new OrbitDbAddress(Cid.v1(Multicodec.DAG_CBOR,
        Multihash.sha2_256(("manifest " + i).getBytes(StandardCharsets.UTF_8))));
  }

  private int publishedOn(final OrbitDbAddress address) {
    return published.getOrDefault(address.topic(), List.of()).size();
  }

  @Test
  void joined_shouldPublishTheHeads_whenHeadsCameInAHeadsExchange() {
    heads.put(DB, List.of(new byte[] {1}, new byte[] {2}));
    republisher.headsExchanged(DB);

    republisher.joined(DB, added(DB, 1));

    assertThat(published.get(DB.topic())).containsExactly(new byte[] {1}, new byte[] {2});
    assertThat(counters).containsEntry("heads-republished", 1L);
  }

  @Test
  void joined_shouldPublishNothing_whenTheEntriesCameOnlyAsMessagesOnTheTopic() {
    heads.put(DB, List.of(new byte[] {1}));

    republisher.joined(DB, added(DB, 1));

    assertThat(published).isEmpty();
  }

  @Test
  void joined_shouldPublishNothing_whenTheJoinAddedNoEntry() {
    heads.put(DB, List.of(new byte[] {1}));
    republisher.headsExchanged(DB);

    republisher.joined(DB, added(DB, 0));

    assertThat(published).isEmpty();
  }

  @Test
  void joined_shouldPublishOncePerSubscription_whenAPeerSubscribedBeforeTheJoinEnded() {
    heads.put(DB, List.of(new byte[] {1}));
    republisher.peerSubscribed(DB);

    republisher.joined(DB, added(DB, 1));
    clock.advance(Duration.ofSeconds(5));
    republisher.joined(DB, added(DB, 1));

    assertThat(publishedOn(DB)).isEqualTo(1);
  }

  @Test
  void joined_shouldCoalesceIntoOnePublicationAtTheIntervalsEnd_whenJoinsComeFaster() {
    heads.put(DB, List.of(new byte[] {1}));
    // A hostile peer: heads in an exchange and a join with new entries, 100 times in 100 ms.
    for (int i = 0; i < 100; i++) {
      republisher.headsExchanged(DB);
      republisher.joined(DB, added(DB, 1));
      clock.advance(Duration.ofMillis(1));
    }
    assertThat(publishedOn(DB)).isEqualTo(1);
    assertThat(counters).containsEntry("heads-republish-deferred", 1L)
        .containsEntry("heads-republish-coalesced", 98L);

    // The heads of the end of the interval go out then, once.
    heads.put(DB, List.of(new byte[] {9}));
    timer.advance(HeadsRepublisher.INTERVAL);
    assertThat(published.get(DB.topic())).containsExactly(new byte[] {1}, new byte[] {9});
    timer.advance(Duration.ofSeconds(10));
    assertThat(publishedOn(DB)).isEqualTo(2);
    assertThat(counters).containsEntry("heads-republished", 2L);
  }

  @Test
  void publish_shouldSendTheLatestHeadsOnly_whenTheDatabaseHasMoreThanTheBound() {
    final List<byte[]> many = new ArrayList<>();
    for (int i = 0; i < HeadsRepublisher.MAX_HEADS + 5; i++) {
      many.add(new byte[] {(byte) i});
    }
    heads.put(DB, many);
    republisher.headsExchanged(DB);

    republisher.joined(DB, added(DB, 1));

    assertThat(published.get(DB.topic())).hasSize(HeadsRepublisher.MAX_HEADS)
        .first().isEqualTo(new byte[] {5});
  }

  @Test
  void joined_shouldKeepTheNodesRate_whenManyDatabasesRepublishAtOnce() {
    final int databases = HeadsRepublisher.NODE_PER_SECOND + 20;
    for (int i = 0; i < databases; i++) {
      heads.put(database(i), List.of(new byte[] {1}));
      republisher.headsExchanged(database(i));
      republisher.joined(database(i), added(database(i), 1));
    }
    assertThat(published).hasSize(HeadsRepublisher.NODE_PER_SECOND);
    assertThat(counters).containsEntry("heads-republish-deferred", 20L);

    timer.advance(HeadsRepublisher.INTERVAL);
    assertThat(published).hasSize(databases);
  }

  @Test
  void turn_shouldPublishNothing_whenTheDatabaseWasForgottenMeanwhile() {
    heads.put(DB, List.of(new byte[] {1}));
    republisher.headsExchanged(DB);
    republisher.joined(DB, added(DB, 1));
    republisher.headsExchanged(DB);
    republisher.joined(DB, added(DB, 1));

    republisher.forget(DB);
    timer.advance(Duration.ofSeconds(5));

    assertThat(publishedOn(DB)).isEqualTo(1);
    assertThat(republisher.size()).isZero();
  }
}
