package io.relaypinner.orbitdb.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.orbitdb.Crafting;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Keyvalue "latest wins" capability state of the orbitdb controller. */
class OrbitDbAccessControllerTest {
  private final JavaWriter admin = new JavaWriter();
  private final MemoryBlockstore store = new MemoryBlockstore();
  private final OrbitDbAddress acDb = JavaWriter.database(store, "ac", List.of(admin.id()));
  private final IpfsAccessController admins = new IpfsAccessController(
      AccessControllerRef.parse("/ipfs/" + acDb.manifest().toString(
          io.relaypinner.multiformats.Multibase.Base.BASE58BTC)), List.of(admin.id()));
  private final OrbitDbAccessController controller = new OrbitDbAccessController(
      AccessControllerRef.parse(acDb.toString()), admins);

  private Entry op(final long time, final String op, final String key,
      final DagCborValue value) {
    final byte[] block = admin.entry(acDb, time, List.of(), List.of(), DagCborValue.nullValue());
    return Entry.decode(Crafting.withFields(block, Map.of("payload", DagCborValue.map(Map.of(
        "op", DagCborValue.of(op), "key", DagCborValue.of(key), "value", value)))));
  }

  private static DagCborValue ids(final String... ids) {
    return DagCborValue.list(java.util.Arrays.stream(ids).map(DagCborValue::of).toList());
  }

  @Test
  void canWrite_shouldFollowLatestPutOrDel_inClockOrder() {
    assertThat(controller.canWrite(admin.id())).isTrue();
    assertThat(controller.canWrite("bob")).isFalse();

    controller.refresh(List.of(op(1, "PUT", "write", ids("alice")),
        op(2, "PUT", "write", ids("alice", "bob"))));
    assertThat(controller.canWrite("bob")).isTrue();
    assertThat(controller.capabilities().admin()).containsExactly(admin.id());

    // Order of the collection does not matter; the Lamport clock does.
    controller.refresh(List.of(op(3, "DEL", "write", DagCborValue.nullValue()),
        op(2, "PUT", "write", ids("alice", "bob"))));
    assertThat(controller.canWrite("bob")).isFalse();
    assertThat(controller.canWrite("alice")).isFalse();
    assertThat(controller.canWrite(admin.id())).isTrue();

    controller.refresh(List.of(op(4, "PUT", "admin", ids("*"))));
    assertThat(controller.canWrite("anyone")).isTrue();
  }

  @Test
  void apply_shouldUpdateFromTheNewEntriesAlone_asARefreshOfTheWholeLogWould() {
    controller.apply(List.of(op(2, "PUT", "write", ids("alice", "bob"))));
    assertThat(controller.canWrite("bob")).isTrue();

    // An older entry arriving late changes nothing; other keys are not capabilities.
    controller.apply(List.of(op(1, "PUT", "write", ids("carol")),
        op(9, "PUT", "colour", ids("mallory"))));
    assertThat(controller.capabilities().write()).containsExactlyInAnyOrder("alice", "bob");
    assertThat(controller.canWrite("mallory")).isFalse();

    // A later DEL removes the grant, as the whole log in any order would.
    controller.apply(List.of(op(3, "DEL", "write", DagCborValue.nullValue())));
    assertThat(controller.canWrite("alice")).isFalse();
    final OrbitDbAccessController whole = new OrbitDbAccessController(controller.ref(),
        admins);
    whole.refresh(List.of(op(3, "DEL", "write", DagCborValue.nullValue()),
        op(1, "PUT", "write", ids("carol")), op(2, "PUT", "write", ids("alice", "bob"))));
    assertThat(whole.capabilities()).isEqualTo(controller.capabilities());
  }
}
