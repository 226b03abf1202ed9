package io.relaypinner.orbitdb.identity;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.JsDump;
import io.relaypinner.orbitdb.log.Entry;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class IdentitiesTest {
  private final JsDump dump = JsDump.resource("orbitdb-vectors-stack-b.json");
  private final AtomicInteger fetches = new AtomicInteger();
  private final BlockFetcher counting = cid -> {
    fetches.incrementAndGet();
    return dump.fetcher().fetch(cid);
  };

  @Test
  void cache_shouldKeepTheMostRecentlyUsedIdentities_withinItsSize() {
    final JsDump.Db db = dump.dbs().get(0);
    final Cid writer = Entry.decode(dump.block(db.entries().get(0).get("hash").asText()))
        .identity();
    final Cid intruder = Entry.decode(dump.intruderBlock()).identity();
    assertThat(writer).isNotEqualTo(intruder);
    // Nothing stored: every resolution that misses the cache fetches.
    final Identities identities = new Identities(new MemoryBlockstore(), counting,
        IdentityVerifiers.defaults(), Runnable::run, 1);

    assertThat(identities.resolve(writer).join().hash()).isEqualTo(writer);
    assertThat(identities.resolve(writer).join().hash()).isEqualTo(writer);
    assertThat(fetches).hasValue(1);
    identities.resolve(intruder).join();
    assertThat(fetches).hasValue(2);
    // One identity fits: the writer's, least recently used, left for the intruder's.
    identities.resolve(intruder).join();
    assertThat(fetches).hasValue(2);
    identities.resolve(writer).join();
    assertThat(fetches).hasValue(3);
  }
}
