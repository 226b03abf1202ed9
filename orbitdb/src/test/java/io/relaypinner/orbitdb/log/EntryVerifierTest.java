package io.relaypinner.orbitdb.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.libp2p.crypto.Secp256k1PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.Crafting;
import io.relaypinner.orbitdb.EntryRejectedException;
import io.relaypinner.orbitdb.JsDump;
import io.relaypinner.orbitdb.RejectReason;
import io.relaypinner.orbitdb.access.AccessController;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.Identity;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Entry verification against databases written by real OrbitDB (vectors from
 * interop/js/common/orbitdb-peer.mjs: OrbitDB 3.0.2 on stack A, 4.0.0 on stacks B and C), and
 * against attacks crafted from them.
 */
class EntryVerifierTest {
  private static JsDump dump(final String stack) {
    return JsDump.resource("orbitdb-vectors-" + stack + ".json");
  }

  private static EntryVerifier verifier(final JsDump dump, final JsDump.Db db,
      final MemoryBlockstore store) {
    final AccessController ac = io.relaypinner.orbitdb.TestSupportAccess.of(dump, db);
    final Identities identities = new Identities(store, dump.fetcher(),
        IdentityVerifiers.defaults(), Runnable::run, 100);
    return new EntryVerifier(db.address(), ac, identities, Runnable::run);
  }

  private static RejectReason rejection(final EntryVerifier verifier, final byte[] block) {
    try {
      verifier.verify(Entry.decode(block)).get(10, TimeUnit.SECONDS);
    } catch (final java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof EntryRejectedException rejected) {
        return rejected.reason();
      }
      throw new AssertionError(e);
    } catch (final Exception e) {
      throw new AssertionError(e);
    }
    return null;
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void verify_shouldAcceptEveryJsEntry_whenWrittenByOrbitDb(final String stack)
      throws Exception {
    final JsDump dump = dump(stack);
    int verified = 0;
    for (final JsDump.Db db : dump.dbs()) {
      final MemoryBlockstore store = new MemoryBlockstore();
      final EntryVerifier verifier = verifier(dump, db, store);
      for (final var js : db.entries()) {
        final Entry entry = Entry.decode(dump.block(js.get("hash").asText()));
        assertThat(entry.hash()).isEqualTo(js.get("hash").asText());
        assertThat(entry.clockTime()).isEqualTo(js.get("clock").get("time").asLong());
        assertThat(entry.key()).isEqualTo(js.get("key").asText());
        final Identity identity = verifier.verify(entry).get(10, TimeUnit.SECONDS);
        assertThat(identity.id()).isEqualTo(db.identityId());
        assertThat(identity.type()).isEqualTo(db.identityType());
        verified++;
      }
    }
    // 6 databases of 3 entries and the orbitdb controller's database with its one grant.
    assertThat(verified).isEqualTo(19);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void verify_shouldRejectUnauthorizedWriter_whenIdentityNotInAccessController(
      final String stack) {
    final JsDump dump = dump(stack);
    final JsDump.Db db = dump.db("events-pk");
    assertThat(rejection(verifier(dump, db, new MemoryBlockstore()), dump.intruderBlock()))
        .isEqualTo(RejectReason.UNAUTHORIZED_WRITER);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void verify_shouldRefuseAnUnauthorizedWriter_beforeCheckingItsSignature(final String stack) {
    // A forged entry by a writer the access controller refuses: refused as unauthorized, the
    // lookup before the signature (cheap checks first), so its forged signature costs nothing.
    final JsDump dump = dump(stack);
    final JsDump.Db db = dump.db("events-pk");
    assertThat(rejection(verifier(dump, db, new MemoryBlockstore()),
        Crafting.forgedPayload(dump.intruderBlock())))
        .isEqualTo(RejectReason.UNAUTHORIZED_WRITER);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void verify_shouldRejectForgedSignature_whenPayloadChanged(final String stack) {
    final JsDump dump = dump(stack);
    for (final String name : new String[] {"events-pk", "events-did"}) {
      final JsDump.Db db = dump.db(name);
      final byte[] real = dump.block(db.entries().get(0).get("hash").asText());
      assertThat(rejection(verifier(dump, db, new MemoryBlockstore()),
          Crafting.forgedPayload(real))).isEqualTo(RejectReason.FORGED_SIGNATURE);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void verify_shouldRejectKeyIdentityMismatch_whenSignedByAnotherKey(final String stack) {
    final JsDump dump = dump(stack);
    final JsDump.Db db = dump.db("keyvalue-pk");
    final byte[] real = dump.block(db.entries().get(1).get("hash").asText());
    final byte[] crafted = Crafting.signedByOtherKey(real,
        Secp256k1PrivateKey.generate(new SecureRandom()));
    assertThat(rejection(verifier(dump, db, new MemoryBlockstore()), crafted))
        .isEqualTo(RejectReason.KEY_IDENTITY_MISMATCH);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void verify_shouldRejectWrongLog_whenEntryIdIsAnotherDatabase(final String stack) {
    final JsDump dump = dump(stack);
    final JsDump.Db events = dump.db("events-pk");
    final JsDump.Db documents = dump.db("documents-pk");
    final byte[] real = dump.block(events.entries().get(0).get("hash").asText());
    assertThat(rejection(verifier(dump, documents, new MemoryBlockstore()), real))
        .isEqualTo(RejectReason.WRONG_LOG);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void verify_shouldRejectUnknownIdentityType_whenIdentityIsWebauthn(final String stack) {
    final JsDump dump = dump(stack);
    final JsDump.Db db = dump.db("events-pk");
    final byte[] real = dump.block(db.entries().get(0).get("hash").asText());
    final Entry entry = Entry.decode(real);
    final Identity js = Identity.decode(entry.identity(), dump.block(entry.identity()));
    final byte[] webauthn = Identity.encode(js.id(), "webauthn", js.publicKey(),
        js.idSignature(), js.publicKeySignature());
    final MemoryBlockstore store = new MemoryBlockstore();
    final Cid identityCid = DagCbor.cid(webauthn);
    store.put(identityCid, webauthn);
    final byte[] crafted = Crafting.withFields(real, Map.of("identity",
        DagCborValue.of(identityCid.toString(io.relaypinner.multiformats.Multibase.Base
            .BASE58BTC))));
    assertThat(rejection(verifier(dump, db, store), crafted))
        .isEqualTo(RejectReason.UNKNOWN_IDENTITY_TYPE);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void verify_shouldRejectInvalidIdentity_whenDidSignatureTampered(final String stack) {
    final JsDump dump = dump(stack);
    final JsDump.Db db = dump.db("events-did");
    final byte[] real = dump.block(db.entries().get(0).get("hash").asText());
    final Entry entry = Entry.decode(real);
    final Identity js = Identity.decode(entry.identity(), dump.block(entry.identity()));
    final String jws = js.publicKeySignature();
    final char last = jws.charAt(jws.length() - 2);
    final String tampered = jws.substring(0, jws.length() - 2) + (last == 'A' ? 'B' : 'A')
        + jws.charAt(jws.length() - 1);
    final byte[] identityBlock = Identity.encode(js.id(), js.type(), js.publicKey(),
        js.idSignature(), tampered);
    final MemoryBlockstore store = new MemoryBlockstore();
    final Cid identityCid = DagCbor.cid(identityBlock);
    store.put(identityCid, identityBlock);
    final byte[] crafted = Crafting.withFields(real, Map.of("identity",
        DagCborValue.of(identityCid.toString(io.relaypinner.multiformats.Multibase.Base
            .BASE58BTC))));
    assertThat(rejection(verifier(dump, db, store), crafted))
        .isEqualTo(RejectReason.INVALID_IDENTITY);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void verify_shouldRejectIdentityUnavailable_whenIdentityBlockMissing(final String stack) {
    final JsDump dump = dump(stack);
    final JsDump.Db db = dump.db("events-pk");
    final byte[] real = dump.block(db.entries().get(0).get("hash").asText());
    final byte[] missing = Identity.encode("nobody", "publickey", "00", "00", "00");
    final byte[] crafted = Crafting.withFields(real, Map.of("identity",
        DagCborValue.of(DagCbor.cid(missing).toString(io.relaypinner.multiformats.Multibase.Base
            .BASE58BTC))));
    assertThat(rejection(verifier(dump, db, new MemoryBlockstore()), crafted))
        .isEqualTo(RejectReason.IDENTITY_UNAVAILABLE);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void decode_shouldRejectMalformedEntry_whenFieldMissingOrTruncated(final String stack) {
    final JsDump dump = dump(stack);
    final byte[] real = dump.block(dump.db("events-pk").entries().get(0).get("hash").asText());
    final byte[] truncated = java.util.Arrays.copyOf(real, real.length - 3);
    assertThatThrownBy(() -> Entry.decode(truncated))
        .isInstanceOf(io.relaypinner.orbitdb.MalformedBlockException.class);
    final Map<String, DagCborValue> fields = new java.util.HashMap<>(DagCbor.decode(real)
        .asMap().entries());
    fields.remove("sig");
    assertThatThrownBy(() -> Entry.decode(DagCbor.encode(DagCborValue.map(fields))))
        .isInstanceOf(io.relaypinner.orbitdb.MalformedBlockException.class)
        .hasMessageContaining("sig");
    final byte[] v1 = Crafting.withFields(real, Map.of("v", DagCborValue.of(1)));
    assertThatThrownBy(() -> Entry.decode(v1))
        .isInstanceOf(io.relaypinner.orbitdb.MalformedBlockException.class)
        .hasMessageContaining("version 1");
    assertThatThrownBy(() -> Entry.decode(Cid.parse(dump.db("events-pk").entries().get(1)
        .get("hash").asText()), real))
        .isInstanceOf(io.relaypinner.orbitdb.MalformedBlockException.class)
        .hasMessageContaining("does not hash");
  }
}
