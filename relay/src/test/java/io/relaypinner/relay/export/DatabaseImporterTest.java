package io.relaypinner.relay.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.ipfs.car.CarWriter;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.Entry;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** An import judges identities with the node's verifiers, not a default set of its own. */
class DatabaseImporterTest {
  private final MemoryBlockstore writerStore = new MemoryBlockstore();
  private final JavaWriter writer = new JavaWriter();

  private byte[] car(final OrbitDbAddress address, final Cid head) throws Exception {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (CarWriter car = new CarWriter(out, List.of(address.manifest(), head))) {
      final List<Cid> all = new ArrayList<>();
      writerStore.forEachKey(all::add);
      for (final Cid cid : all) {
        car.write(cid, writerStore.get(cid).orElseThrow());
      }
    }
    return out.toByteArray();
  }

  private DatabaseImporter.Result importWith(final IdentityVerifiers verifiers, final byte[] car)
      throws Exception {
    final MemoryBlockstore blockstore = new MemoryBlockstore();
    final MemoryDatastore datastore = new MemoryDatastore();
    return new DatabaseImporter(blockstore, datastore,
        new PinStore(datastore, blockstore, CodecLinkResolver.standard()),
        CodecLinkResolver.standard(), payload -> Set.of(), Runnable::run,
        CarReader.Limits.DEFAULT, Duration.ofSeconds(10), verifiers,
        address -> Optional.empty()).importCar(new ByteArrayInputStream(car));
  }

  @Test
  void importCar_shouldJudgeIdentitiesWithTheVerifiersItIsGiven() throws Exception {
    writerStore.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(writerStore, "verifiers",
        List.of(writer.id()));
    final List<Entry> chain = writer.chain(writerStore, address, 3);
    final byte[] car = car(address, chain.get(2).cid());

    final IdentityVerifiers node = IdentityVerifiers.defaults();
    assertThat(importWith(node, car).entries()).isEqualTo(3);
    assertThat(node.stats()).isNotEmpty();

    // A node that accepts no identity type refuses every entry of the same CAR.
    final DatabaseImporter.Result refused = importWith(new IdentityVerifiers(List.of()), car);
    assertThat(refused.entries()).isZero();
    assertThat(refused.rejected()).isNotEmpty();
  }
}
