package io.relaypinner.orbitdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.heads.HeadsConfig;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.orbitdb.log.LogConfig;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OrbitDbReplicasTest {
  private final MemoryBlockstore store = new MemoryBlockstore();

  private ReplicasNode replicas(final BlockFetcher fetcher) {
    return new ReplicasNode(new ReplicaContext(store, new MemoryDatastore(), fetcher,
        new Identities(store, fetcher, IdentityVerifiers.defaults(), Runnable::run, 100),
        Runnable::run, LogConfig.DEFAULT), HeadsConfig.DEFAULT);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void follow_shouldOpenControllerDatabase_whenAccessControllerIsOrbitdb(final String stack)
      throws Exception {
    final JsDump dump = JsDump.resource("orbitdb-vectors-" + stack + ".json");
    final ReplicasNode replicas = replicas(dump.fetcher());
    final JsDump.Db db = dump.db("keyvalue-oac");
    final JsDump.Db acDb = dump.db("keyvalue-oac/access");

    final OrbitDbReplica replica = replicas.follow(db.address()).get(5, TimeUnit.SECONDS);

    assertThat(replica.accessControllerDatabase().orElseThrow().address())
        .isEqualTo(acDb.address());
    assertThat(replicas.replica(acDb.address())).isPresent();
    // Manifest and controller blocks are kept for readers.
    assertThat(store.has(db.address().manifest())).isTrue();
    assertThat(store.has(acDb.address().manifest())).isTrue();
    // Before the controller database is synced only its admins may write; the grant to the
    // did identity arrives with its log.
    final String did = dump.db("events-did").identityId();
    assertThat(replica.accessController().canWrite(db.identityId())).isTrue();
    assertThat(replica.accessController().canWrite(did)).isFalse();
    final JoinResult acJoin = replicas.replica(acDb.address()).orElseThrow()
        .join(Cid.parse(acDb.heads().get(0))).get(5, TimeUnit.SECONDS);
    assertThat(acJoin.added()).hasSize(1);
    assertThat(replica.accessController().canWrite(did)).isTrue();
    final JoinResult join = replica.join(Cid.parse(db.heads().get(0))).get(5, TimeUnit.SECONDS);
    assertThat(join.added()).hasSize(db.entries().size());
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void aControllersDatabaseFollowedFirst_shouldBeTheOneReplicaItsDatabaseUses(final String stack)
      throws Exception {
    final JsDump dump = JsDump.resource("orbitdb-vectors-" + stack + ".json");
    final ReplicasNode replicas = replicas(dump.fetcher());
    final JsDump.Db db = dump.db("keyvalue-oac");
    final JsDump.Db acDb = dump.db("keyvalue-oac/access");

    // Anyone may subscribe to the controller's database first: it is followed for itself.
    final OrbitDbReplica controller = replicas.follow(acDb.address()).get(5, TimeUnit.SECONDS);
    final OrbitDbReplica replica = replicas.follow(db.address()).get(5, TimeUnit.SECONDS);

    // One replica (one log writing the stored state), not a second one for the database.
    assertThat(replica.accessControllerDatabase().orElseThrow()).isSameAs(controller);
    assertThat(replicas.replica(acDb.address()).orElseThrow()).isSameAs(controller);
    final String did = dump.db("events-did").identityId();
    controller.join(Cid.parse(acDb.heads().get(0))).get(5, TimeUnit.SECONDS);
    assertThat(replica.accessController().canWrite(did)).isTrue();

    // Unfollowing the database leaves the controller's, followed for itself, as it was.
    replicas.replicas().unfollow(db.address());
    assertThat(replicas.replica(acDb.address()).orElseThrow()).isSameAs(controller);
    assertThat(replicas.replica(db.address())).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void onPubsubMessage_shouldJoinEntryBlock_whenTopicIsFollowed(final String stack)
      throws Exception {
    final JsDump dump = JsDump.resource("orbitdb-vectors-" + stack + ".json");
    final ReplicasNode replicas = replicas(dump.fetcher());
    final JsDump.Db db = dump.db("documents-pk");
    replicas.follow(db.address()).get(5, TimeUnit.SECONDS);
    final byte[] head = dump.block(db.heads().get(0));
    final JoinResult result = replicas.onPubsubMessage(db.address().topic(), head)
        .orElseThrow().get(5, TimeUnit.SECONDS);
    assertThat(result.added()).hasSize(db.entries().size());
    assertThat(replicas.onPubsubMessage("/orbitdb/other", head)).isEmpty();
  }

  @org.junit.jupiter.api.Test
  void unfollow_shouldDropTheControllersDatabase_onceNoFollowedDatabaseUsesIt() throws Exception {
    final JsDump dump = JsDump.resource("orbitdb-vectors-stack-a.json");
    final JsDump.Db db = dump.db("keyvalue-oac");
    final JsDump.Db acDb = dump.db("keyvalue-oac/access");

    final ReplicasNode node = replicas(dump.fetcher());
    node.follow(db.address()).get(5, TimeUnit.SECONDS);
    assertThat(node.replica(acDb.address())).isPresent();
    // Unfollowing the controller's database alone keeps it: the database still needs it.
    node.replicas().unfollow(acDb.address());
    assertThat(node.replica(acDb.address())).isPresent();
    node.replicas().unfollow(db.address());
    assertThat(node.replicas().replicas()).isEmpty();

    // Followed for itself too: it stays when the database using it goes.
    final ReplicasNode both = replicas(dump.fetcher());
    both.follow(db.address()).get(5, TimeUnit.SECONDS);
    both.follow(acDb.address()).get(5, TimeUnit.SECONDS);
    both.replicas().unfollow(db.address());
    assertThat(both.replicas().replicas()).extracting(OrbitDbReplica::address)
        .containsExactly(acDb.address());
  }

  @org.junit.jupiter.api.Test
  void unfollow_shouldKeepTheLogsCounters_andGiveItsMemoryBack() throws Exception {
    final JsDump dump = JsDump.resource("orbitdb-vectors-stack-a.json");
    final ReplicasNode node = replicas(dump.fetcher());
    final JsDump.Db db = dump.db("events-pk");
    final OrbitDbReplica replica = node.follow(db.address()).get(5, TimeUnit.SECONDS);
    replica.join(Cid.parse(db.heads().get(0))).get(5, TimeUnit.SECONDS);
    final long accepted = node.replicas().logCounters().get("accepted");
    assertThat(accepted).isEqualTo(db.entries().size());

    node.replicas().unfollow(db.address());

    assertThat(node.replicas().replica(db.address())).isEmpty();
    // A counter's sum never goes down when a database is unfollowed.
    assertThat(node.replicas().logCounters()).containsEntry("accepted", accepted);
    assertThat(node.replicas().context().logMemory().incomplete()).isZero();
  }

  @ParameterizedTest
  @ValueSource(strings = {"todo-delegation", "orbitdb-deferred"})
  void follow_shouldFailAndCount_whenAccessControllerTypeIsUnknown(final String type) {
    final byte[] manifest = Manifest.encode("db", "events", "/" + type + "/zdpuX", null);
    final Cid cid = DagCbor.cid(manifest);
    store.put(cid, manifest);
    final ReplicasNode replicas = replicas(new BlockstoreFetcher(store));
    assertThatThrownBy(() -> replicas.follow(new OrbitDbAddress(cid)).get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasRootCauseInstanceOf(UnsupportedTypeException.class)
        .hasStackTraceContaining("\"" + type + "\"");
    assertThat(replicas.replicas().counters())
        .containsEntry("open-failed.unsupported-access-controller." + type, 1L);
    assertThat(replicas.replicas().replicas()).isEmpty();
  }
}
