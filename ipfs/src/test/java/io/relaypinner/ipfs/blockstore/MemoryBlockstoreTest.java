package io.relaypinner.ipfs.blockstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemoryBlockstoreTest {
  private static final byte[] HELLO = "hello".getBytes(StandardCharsets.UTF_8);

  @Test
  void put_shouldStoreVerifiedBlocks_keyedByMultihash() {
    final MemoryBlockstore store = new MemoryBlockstore();
    final Multihash hash = Multihash.sha2_256(HELLO);
    store.put(Cid.v1(Multicodec.RAW, hash), HELLO);
    assertThat(store.has(Cid.v1(Multicodec.DAG_CBOR, hash))).isTrue();
    assertThat(store.get(Cid.v0(hash))).contains(HELLO);
    assertThat(store.size(Cid.v1(Multicodec.RAW, hash))).contains(5);
    final List<Cid> keys = new ArrayList<>();
    store.forEachKey(keys::add);
    assertThat(keys).containsExactly(Cid.v1(Multicodec.RAW, hash));
    assertThat(store.delete(Cid.v1(Multicodec.RAW, hash))).isTrue();
    assertThat(store.has(Cid.v1(Multicodec.RAW, hash))).isFalse();
  }

  @Test
  void put_shouldRejectBytesThatDoNotHashToTheCid_andStoreNothing() {
    final MemoryBlockstore store = new MemoryBlockstore();
    final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(HELLO));
    assertThatThrownBy(() -> store.put(cid, "hellO".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(InvalidBlockException.class).hasMessageContaining(cid.toString());
    assertThat(store.count()).isZero();
    assertThatThrownBy(() -> store.put(cid, new byte[Blocks.MAX_BLOCK_SIZE + 1]))
        .isInstanceOf(InvalidBlockException.class).hasMessageContaining("exceeds");
  }

  @Test
  void identityCids_shouldBeAnsweredInline_andNeverStored() {
    final MemoryBlockstore store = new MemoryBlockstore();
    final Cid inline = Cid.v1(Multicodec.RAW, Multihash.identity(HELLO));
    assertThat(store.has(inline)).isTrue();
    assertThat(store.get(inline)).contains(HELLO);
    store.put(inline, HELLO);
    assertThat(store.count()).isZero();
  }
}
