package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.Manifest;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.access.IpfsAccessController;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import java.util.concurrent.Executor;

/** The verifier of a test database with an {@code ipfs} access controller (JavaWriter's). */
final class TestVerifiers {
  private TestVerifiers() {}

  /**
   * @param remote holds the database's manifest and controller
   * @param local where verified identities are stored
   */
  static EntryVerifier of(final OrbitDbAddress address, final Blockstore remote,
      final Blockstore local, final BlockFetcher fetcher, final Executor executor) {
    final Manifest manifest = Manifest.decode(address, remote.get(address.manifest())
        .orElseThrow());
    final IpfsAccessController ac = IpfsAccessController.decode(manifest.accessController(),
        remote.get(manifest.accessController().ipfsManifest()).orElseThrow());
    final Identities identities = new Identities(local, fetcher, IdentityVerifiers.defaults(),
        executor, 100);
    return new EntryVerifier(address, ac, identities, executor);
  }
}
