package io.relaypinner.relay.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.multiformats.Multihash;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GatewayCacheTest {
  @Test
  void maxBlocksFor_shouldTakeA32ndOfTheHeap_withinItsBounds() {
    assertThat(GatewayCache.maxBlocksFor(160L << 20)).isEqualTo(20_480);
    assertThat(GatewayCache.maxBlocksFor(1L << 20)).isEqualTo(1_024);
    assertThat(GatewayCache.maxBlocksFor(64L << 30)).isEqualTo(GatewayCache.MAX_BLOCKS);
  }

  @Test
  void tinyBlocks_shouldNotGrowTheIndexBeyondTheHeapShare_whileBytesStayFarBelowTheBudget() {
    // The attack: a DAG of 100-byte leaves fetched through the fallback; 1 GiB of budget would
    // track ten million of them.
    final GatewayCache cache = GatewayCache.forHeap(1L << 30, 160L << 20);
    for (int batch = 0; batch < 30; batch++) {
      final Map<Multihash, Integer> used = new HashMap<>();
      for (int i = 0; i < 1_000; i++) {
        final byte[] data = ByteBuffer.allocate(8).putInt(batch).putInt(i).array();
        used.put(Multihash.sha2_256(data), 100);
      }
      cache.admit(used);
    }
    assertThat(cache.blockCount()).isEqualTo(20_480);
    assertThat(cache.bytes()).isEqualTo(20_480L * 100);
    assertThat(cache.evictions()).isEqualTo(30_000 - 20_480);
    assertThat(cache.drainEvicted()).hasSize(30_000 - 20_480);
  }
}
