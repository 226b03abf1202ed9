package io.relaypinner.relay.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An import judges identities with the node's verifiers, not a default set of its own; refuses
 * a denied database from the CAR's header; and leaves nothing stored, staged or pinned when its
 * body is cut short or too large.
 */
class DatabaseImporterTest {
  @TempDir
  Path staging;
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
        address -> Optional.empty(),
        new ImportStaging(staging, ExportRoutes.MAX_IMPORT_BYTES), address -> true).importCar(new ByteArrayInputStream(car));
  }

  private DatabaseImporter importer(final MemoryBlockstore blockstore,
      final MemoryDatastore datastore, final Predicate<OrbitDbAddress> policy) {
    return new DatabaseImporter(blockstore, datastore,
        new PinStore(datastore, blockstore, CodecLinkResolver.standard()),
        CodecLinkResolver.standard(), payload -> Set.of(), Runnable::run,
        CarReader.Limits.DEFAULT, Duration.ofSeconds(10), IdentityVerifiers.defaults(),
        address -> Optional.empty(), new ImportStaging(staging, 1L << 20), policy);
  }

  private static boolean empty(final Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.findAny().isEmpty();
    }
  }

  @Test
  void importCar_shouldRefuseADeniedDatabaseFromTheHeader_storingNothing() throws Exception {
    writerStore.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(writerStore, "denied",
        List.of(writer.id()));
    final List<Entry> chain = writer.chain(writerStore, address, 3);
    final byte[] car = car(address, chain.get(2).cid());
    final MemoryBlockstore blockstore = new MemoryBlockstore();
    final MemoryDatastore datastore = new MemoryDatastore();
    // The body after the header is never read: the refusal comes from the roots alone.
    final int[] read = new int[1];
    final InputStream body = new FilterInputStream(
        new ByteArrayInputStream(car)) {
      @Override
      public int read(final byte[] into, final int offset, final int length)
          throws IOException {
        final int n = super.read(into, offset, length);
        read[0] += Math.max(n, 0);
        return n;
      }
    };

    assertThatThrownBy(() ->
        importer(blockstore, datastore, denied -> !denied.equals(address)).importCar(body))
        .isInstanceOf(DatabaseImporter.DeniedException.class)
        .hasMessageContaining("RELAY_ORBITDB_DENY");
    assertThat(read[0]).isLessThan(car.length);
    final List<Cid> stored = new ArrayList<>();
    blockstore.forEachKey(stored::add);
    assertThat(stored).isEmpty();
    assertThat(empty(staging)).isTrue();
  }

  @Test
  void importCar_shouldStoreNothing_whenTheBodyIsCutShortOrTooLarge() throws Exception {
    writerStore.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(writerStore, "cut",
        List.of(writer.id()));
    final List<Entry> chain = writer.chain(writerStore, address, 3);
    final byte[] car = car(address, chain.get(2).cid());
    final MemoryBlockstore blockstore = new MemoryBlockstore();
    final MemoryDatastore datastore = new MemoryDatastore();
    final DatabaseImporter importer = importer(blockstore, datastore, any -> true);

    assertThatThrownBy(() -> importer.importCar(
        new ByteArrayInputStream(Arrays.copyOf(car, car.length - 10))))
        .isInstanceOf(DatabaseImporter.BadImportException.class);
    final byte[] huge = Arrays.copyOf(car, (1 << 20) + 1);
    assertThatThrownBy(() -> importer.importCar(
        new ByteArrayInputStream(huge))).isInstanceOf(ImportStaging.TooLargeException.class);
    final List<Cid> stored = new ArrayList<>();
    blockstore.forEachKey(stored::add);
    assertThat(stored).isEmpty();
    assertThat(empty(staging)).isTrue();

    final DatabaseImporter.Result result = importer.importCar(new ByteArrayInputStream(car));
    assertThat(result.entries()).isEqualTo(3);
    assertThat(result.heldBytes()).isPositive().isLessThan(64 * 1024);
    assertThat(empty(staging)).as("the staged file is deleted after the import").isTrue();
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
