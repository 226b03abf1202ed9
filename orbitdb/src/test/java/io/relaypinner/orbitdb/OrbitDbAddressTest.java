package io.relaypinner.orbitdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.orbitdb.access.AccessControllerRef;
import io.relaypinner.orbitdb.access.IpfsAccessController;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OrbitDbAddressTest {
  private static final String ADDRESS =
      "/orbitdb/zdpuAt1bxvUFGeudCxwY4ovUjFZ6CfmAvG4z8ibP3qbVpZMAW";

  @Test
  void parse_shouldRoundTrip_whenCanonical() {
    final OrbitDbAddress address = OrbitDbAddress.parse(ADDRESS);
    assertThat(address.toString()).isEqualTo(ADDRESS);
    assertThat(address.topic()).isEqualTo(ADDRESS);
    assertThat(address.headsProtocolId()).isEqualTo("/orbitdb/heads" + ADDRESS);
    assertThat(address.manifest()).isEqualTo(Cid.parse(ADDRESS.substring(9)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "/orbitdb/",
      "orbitdb/zdpuAt1bxvUFGeudCxwY4ovUjFZ6CfmAvG4z8ibP3qbVpZMAW",
      "/orbitdb//zdpuAt1bxvUFGeudCxwY4ovUjFZ6CfmAvG4z8ibP3qbVpZMAW",
      "/orbitdb/zdpuAt1bxvUFGeudCxwY4ovUjFZ6CfmAvG4z8ibP3qbVpZMAW/",
      "/orbitdb/zdpuAt1bxvUFGeudCxwY4ovUjFZ6CfmAvG4z8ibP3qbVpZMA",
      "/orbitdb/bafyreih6hj4ruxcfku5m6k2kywvernqikqsgcnc5jxgsydhgwpxigaaafy",
      "/orbitdb/QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB",
      "/ipfs/zdpuAt1bxvUFGeudCxwY4ovUjFZ6CfmAvG4z8ibP3qbVpZMAW"})
  void parse_shouldThrow_whenNotStrictAddress(final String text) {
    assertThatThrownBy(() -> OrbitDbAddress.parse(text))
        .isInstanceOf(InvalidAddressException.class);
    assertThat(OrbitDbAddress.isValid(text)).isFalse();
  }

  @ParameterizedTest
  @ValueSource(strings = {"/orbitdb/zzz", "/orbitdb/z", "/orbitdb/z0OIl", "/orbitdb/not-a-cid",
      "/orbitdb/zdpuAt1bxvUFGeudCxwY4ovUjFZ6CfmAvG4z8ibP3qbVpZMAW?x", "/orbitdb/\u00e9",
      "/orbitdb/ zdpuAt1bxvUFGeudCxwY4ovUjFZ6CfmAvG4z8ibP3qbVpZMAW",
      "/orbitdb/zdpuAt1bxvUFGeudCxwY4ovUjFZ6CfmAvG4z8ibP3qbVpZMAW "})
  void tryParse_shouldBeEmpty_whenTheCidIsGarbage(final String text) {
    assertThat(OrbitDbAddress.tryParse(text)).isEmpty();
    assertThat(OrbitDbAddress.isValid(text)).isFalse();
    assertThatThrownBy(() -> OrbitDbAddress.parse(text))
        .isInstanceOf(InvalidAddressException.class);
  }

  @Test
  void tryParse_shouldRefuseEveryOtherBase_ofTheSameManifest() {
    final OrbitDbAddress address = OrbitDbAddress.parse(ADDRESS);
    final Cid manifest = address.manifest();
    // JS OrbitDB parses the CID with base58btc only, so no other text names an address.
    for (final Multibase.Base base : Multibase.Base.values()) {
      final String text = OrbitDbAddress.PREFIX + manifest.toString(base);
      if (base == Multibase.Base.BASE58BTC) {
        assertThat(OrbitDbAddress.tryParse(text)).contains(address);
      } else {
        assertThat(OrbitDbAddress.tryParse(text)).as(base.multibaseName()).isEmpty();
      }
    }
    // Cid.toString() is base32 for a CIDv1: the canonical text is the address's own.
    assertThat(OrbitDbAddress.isValid(OrbitDbAddress.PREFIX + manifest)).isFalse();
    assertThat(new OrbitDbAddress(manifest).toString()).isEqualTo(ADDRESS);
  }

  @Test
  void tryParse_shouldRefuseABase58CidThatIsNotDagCbor() {
    final Cid raw = Cid.v1(Multicodec.RAW, OrbitDbAddress.parse(ADDRESS).manifest().multihash());
    final String text = OrbitDbAddress.PREFIX + raw.toString(Multibase.Base.BASE58BTC);
    assertThat(OrbitDbAddress.tryParse(text)).isEmpty();
    assertThatThrownBy(() -> new OrbitDbAddress(raw)).isInstanceOf(InvalidAddressException.class);
    assertThat(OrbitDbAddress.tryParse(null)).isEmpty();
    assertThat(OrbitDbAddress.tryParse(OrbitDbAddress.PREFIX + "z" + "2".repeat(200))).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void manifest_shouldDecodeJsManifests_whenFetchedByAddress(final String stack) {
    final JsDump dump = JsDump.resource("orbitdb-vectors-" + stack + ".json");
    for (final JsDump.Db db : dump.dbs()) {
      final Manifest manifest = Manifest.decode(db.address(), dump.block(db.address()
          .manifest()));
      assertThat(manifest.type()).isEqualTo(db.type());
      assertThat(manifest.accessController().text()).isEqualTo(db.accessController());
      assertThat(manifest.meta()).isNull();
      assertThat(manifest.address()).isEqualTo(db.address());
      assertThat(manifest.accessController().isSupported()).isTrue();
    }
    final JsDump.Db oac = dump.db("keyvalue-oac");
    final Manifest manifest = Manifest.decode(oac.address(), dump.block(oac.address()
        .manifest()));
    assertThat(manifest.accessController().type()).isEqualTo(AccessControllerRef.ORBITDB);
    assertThat(manifest.accessController().orbitDbAddress())
        .isEqualTo(dump.db("keyvalue-oac/access").address());
    final JsDump.Db events = dump.db("events-pk");
    final AccessControllerRef ref = Manifest.decode(events.address(),
        dump.block(events.address().manifest())).accessController();
    final IpfsAccessController ac = IpfsAccessController.decode(ref,
        dump.block(ref.ipfsManifest()));
    assertThat(ac.write()).containsExactly(events.identityId());
    assertThat(ac.canWrite(events.identityId())).isTrue();
    assertThat(ac.canWrite("someone-else")).isFalse();
  }

  @Test
  void manifest_shouldThrow_whenBytesDoNotHashToAddress() {
    final byte[] block = Manifest.encode("db", "events",
        "/ipfs/zdpuApRK4KNu3fuBcNRiPX1hwK4PoKEncUe7AStjZyxUN1hnf", null);
    assertThatThrownBy(() -> Manifest.decode(OrbitDbAddress.parse(ADDRESS), block))
        .isInstanceOf(MalformedBlockException.class).hasMessageContaining("hash");
  }

  @Test
  void manifest_shouldKeepCustomControllerType_whenUnsupported() {
    final byte[] block = Manifest.encode("db", "events", "/todo-delegation/xyz",
        DagCborValue.map(Map.of("app", DagCborValue.of("x"))));
    final Manifest manifest = Manifest.decode(new OrbitDbAddress(DagCbor.cid(block)), block);
    assertThat(manifest.accessController().type()).isEqualTo("todo-delegation");
    assertThat(manifest.accessController().isSupported()).isFalse();
    assertThat(manifest.accessController().blockCid()).isEmpty();
    assertThat(manifest.metaValue()).isPresent();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "/", "ipfs/zdpu", "/ipfs/", "/ipfs/notacid", "/orbitdb/zdpuX",
      "//zdpuAt1bxvUFGeudCxwY4ovUjFZ6CfmAvG4z8ibP3qbVpZMAW"})
  void accessControllerRef_shouldThrow_whenMalformed(final String text) {
    assertThatThrownBy(() -> AccessControllerRef.parse(text))
        .isInstanceOf(MalformedBlockException.class);
  }

  @Test
  void ipfsAccessController_shouldAllowEveryone_whenWildcard() {
    final byte[] block = IpfsAccessController.encode(List.of("*"));
    final AccessControllerRef ref = AccessControllerRef.parse("/ipfs/"
        + DagCbor.cid(block).toString(io.relaypinner.multiformats.Multibase.Base.BASE58BTC));
    assertThat(IpfsAccessController.decode(ref, block).canWrite("anyone")).isTrue();
  }
}
