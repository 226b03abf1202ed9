package io.relaypinner.ipfs.pin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The holder rules of {@link PinStore}: a root stays pinned (and its blocks survive GC) while
 * anything holds it, a holder releases only its own hold, every spelling of a CID is one pin, and
 * pins recorded before holders existed stay held.
 */
class PinHoldersTest {
  private static final PinHolder DATABASE = PinHolder.of("replication", "/orbitdb/zdpuDb");
  private static final PinHolder REQUEST = PinHolder.of("pinsvc", "owner/request-1");
  private static final PinHolder OTHER_REQUEST = PinHolder.of("pinsvc", "owner/request-2");

  private final MemoryBlockstore blocks = new MemoryBlockstore();
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final PinStore pins = new PinStore(datastore, blocks, CodecLinkResolver.standard());

  /** A dag-pb file of one leaf: a root with a CIDv0 form. */
  private Cid file(final String text) {
    final byte[] leafData = text.getBytes(StandardCharsets.UTF_8);
    final Cid leaf = Cid.v1(Multicodec.RAW, Multihash.sha2_256(leafData));
    blocks.put(leaf, leafData);
    final byte[] root = DagPb.encode(PbNode.of(new byte[] {8, 2},
        List.of(PbLink.of(leaf, "", leafData.length))));
    final Cid v0 = Cid.v0(DagPb.cidOf(root).multihash());
    blocks.put(v0, root);
    return v0;
  }

  private long gc() {
    return pins.gc().removed();
  }

  @Test
  void release_shouldKeepThePin_whileAnotherHolderHoldsIt() {
    final Cid media = file("media");
    assertThat(pins.pin(media, REQUEST)).isInstanceOf(PinResult.Pinned.class);
    assertThat(pins.pin(media, DATABASE)).isInstanceOf(PinResult.Pinned.class);
    assertThat(pins.holders(media)).containsExactlyInAnyOrder(REQUEST, DATABASE);

    assertThat(pins.release(media, REQUEST)).isTrue();

    assertThat(pins.isPinned(media)).isTrue();
    assertThat(pins.holders(media)).containsExactly(DATABASE);
    assertThat(gc()).isZero();
    assertThat(blocks.count()).isEqualTo(2);
  }

  @Test
  void release_shouldFreeTheBlocks_whenTheLastHolderReleases() {
    final Cid media = file("media");
    final Cid kept = file("kept");
    pins.pin(media, REQUEST);
    pins.pin(media, OTHER_REQUEST);
    pins.pin(kept, DATABASE);

    assertThat(pins.release(media, REQUEST)).isTrue();
    assertThat(gc()).isZero();
    assertThat(pins.release(media, OTHER_REQUEST)).isTrue();

    assertThat(pins.isPinned(media)).isFalse();
    assertThat(pins.list()).containsExactly(kept.canonical());
    assertThat(gc()).isEqualTo(2);
    assertThat(blocks.has(media)).isFalse();
    assertThat(blocks.has(kept)).isTrue();
  }

  @Test
  void release_shouldChangeNothing_whenTheHolderDoesNotHoldIt() {
    final Cid media = file("media");
    pins.pin(media, DATABASE);

    assertThat(pins.release(media, REQUEST)).isFalse();
    assertThat(pins.release(file("never pinned"), REQUEST)).isFalse();

    assertThat(pins.holders(media)).containsExactly(DATABASE);
    assertThat(gc()).isEqualTo(2);
    assertThat(blocks.has(media)).isTrue();
  }

  @Test
  void everySpellingOfOneCid_shouldBeOnePin() {
    final Cid v0 = file("media");
    final Cid v1 = v0.toV1();
    final List<Cid> spellings = List.of(v0, v1,
        Cid.parse(v1.toString().toUpperCase(Locale.ROOT)),
        Cid.parse(v1.toString(Multibase.Base.BASE58BTC)));
    assertThat(v1.toString().toUpperCase(Locale.ROOT)).startsWith("BAFY");
    assertThat(v1.toString(Multibase.Base.BASE58BTC)).startsWith("z");

    pins.pin(spellings.get(2), REQUEST);
    pins.pin(spellings.get(0), DATABASE);

    for (final Cid spelling : spellings) {
      assertThat(pins.isPinned(spelling)).as(spelling.toString()).isTrue();
      assertThat(pins.holders(spelling)).containsExactly(REQUEST, DATABASE);
    }
    assertThat(pins.list()).containsExactly(v1);
    // The request releases what it sent in another spelling: the database's hold stays.
    assertThat(pins.release(spellings.get(3), REQUEST)).isTrue();
    assertThat(pins.holders(v0)).containsExactly(DATABASE);
    assertThat(gc()).isZero();
    assertThat(pins.release(v1, DATABASE)).isTrue();
    assertThat(pins.isPinned(v0)).isFalse();
  }

  @Test
  void holdIfPinned_shouldAddAHold_onlyToARootHeldAlready() {
    final Cid media = file("media");

    assertThat(pins.holdIfPinned(media, DATABASE, false)).isFalse();
    assertThat(pins.isPinned(media)).isFalse();

    pins.pin(media, REQUEST);
    // Held already: no walk needed, so even a damaged DAG gets the hold (the pin stands).
    assertThat(pins.holdIfPinned(media, DATABASE, true)).isTrue();
    assertThat(pins.holdIfPinned(media, DATABASE, false)).isTrue();
    assertThat(pins.isHeldBy(media, DATABASE)).isTrue();

    pins.release(media, REQUEST);
    assertThat(pins.holders(media)).containsExactly(DATABASE);
    assertThat(gc()).isZero();
  }

  @Test
  void pin_shouldRecordNoHold_whenTheDagIsIncomplete() {
    final Cid media = file("media");
    final Cid leaf = DagPb.linkedCids(blocks.get(media).orElseThrow()).get(0);
    blocks.delete(leaf);

    assertThat(pins.pin(media, REQUEST)).isInstanceOf(PinResult.Incomplete.class);

    assertThat(pins.isPinned(media)).isFalse();
    assertThat(pins.holders(media)).isEmpty();
  }

  @Test
  void legacyPins_shouldStayHeld_beforeAndAfterTheirMigration() {
    final Cid v0 = file("old v0 pin");
    final Cid v1 = file("old v1 pin").toV1();
    final Cid stray = file("stray");
    // As relays before holders recorded them: /pins/<cid text>, the value the binary CID.
    datastore.put(PinStore.PREFIX + v0, v0.bytes());
    datastore.put(PinStore.PREFIX + v1, v1.bytes());
    datastore.put(PinStore.PREFIX + "garbage", new byte[] {1, 2, 3});

    // Before the migration they are GC roots all the same.
    assertThat(pins.list()).containsExactlyInAnyOrder(v0.canonical(), v1);
    assertThat(pins.isPinned(v1)).isTrue();
    assertThat(pins.holders(v1)).containsExactly(PinHolder.LEGACY);
    assertThat(gc()).isEqualTo(2);
    assertThat(blocks.has(stray)).isFalse();

    assertThat(pins.migrateLegacy()).isEqualTo(2);
    assertThat(pins.migrateLegacy()).isZero();

    for (final Cid old : List.of(v0, v1)) {
      assertThat(pins.isPinned(old)).isTrue();
      assertThat(pins.holders(old)).containsExactly(PinHolder.LEGACY);
      // A holder that takes the pin too, then lets go, does not take the legacy hold with it.
      pins.pin(old, REQUEST);
      assertThat(pins.release(old, REQUEST)).isTrue();
      assertThat(pins.isPinned(old)).isTrue();
    }
    assertThat(datastore.get(PinStore.PREFIX + v0)).isEmpty();
    assertThat(datastore.get(PinStore.PREFIX + "garbage")).isPresent();
    assertThat(pins.list()).containsExactlyInAnyOrder(v0.canonical(), v1);
    assertThat(gc()).isZero();
    assertThat(blocks.count()).isEqualTo(4);
  }

  @Test
  void holder_shouldBeKindAndName() {
    assertThat(PinHolder.of("pinsvc", "a/b").kind()).isEqualTo("pinsvc");
    assertThat(PinHolder.LEGACY.kind()).isEqualTo("legacy");
    assertThatThrownBy(() -> new PinHolder("no-kind")).isInstanceOf(
        IllegalArgumentException.class);
    assertThatThrownBy(() -> new PinHolder("Kind:x")).isInstanceOf(
        IllegalArgumentException.class);
    assertThatThrownBy(() -> PinHolder.of("x", "a\nb")).isInstanceOf(
        IllegalArgumentException.class);
    assertThatThrownBy(() -> PinHolder.of("x", "y".repeat(PinHolder.MAX_LENGTH))).isInstanceOf(
        IllegalArgumentException.class);
  }
}
