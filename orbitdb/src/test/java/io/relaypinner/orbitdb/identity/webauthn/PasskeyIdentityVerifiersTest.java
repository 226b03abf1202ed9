package io.relaypinner.orbitdb.identity.webauthn;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.libp2p.crypto.Secp256k1PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.EntryRejectedException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.RejectReason;
import io.relaypinner.orbitdb.access.AccessController;
import io.relaypinner.orbitdb.access.AccessControllerRef;
import io.relaypinner.orbitdb.access.IpfsAccessController;
import io.relaypinner.orbitdb.access.OrbitDbAccessController;
import io.relaypinner.orbitdb.identity.Hex;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.Identity;
import io.relaypinner.orbitdb.identity.IdentityRefusal;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.EntryVerifier;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Passkey identities and entries made by the real provider (0.3.1, vectors) verify; forged ones
 * (crafted here with {@link SoftPasskey}) are refused with the reason named.
 */
class PasskeyIdentityVerifiersTest {
  private static final PasskeyVectors V = PasskeyVectors.LOADED;
  private static final WebAuthnConfig RP = WebAuthnConfig.parse(V.origin, "");
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String ENTRY = WebAuthnVarsigIdentityVerifier.LABEL_ENTRY;

  /** The refusal label of {@code identity}, or {@code valid}. */
  private static String verdict(final WebAuthnConfig config, final Identity identity) {
    final IdentityVerifiers verifiers = IdentityVerifiers.withPasskeys(config);
    try {
      verifiers.verify(identity);
    } catch (final EntryRejectedException e) {
      assertThat(e.reason()).isEqualTo(RejectReason.INVALID_IDENTITY);
    }
    final Map<String, Long> stats = verifiers.stats();
    assertThat(stats).hasSize(1);
    final String key = stats.keySet().iterator().next();
    return key.substring(key.indexOf('/') + 1);
  }

  private static Identity identity(final String id, final String type, final String publicKey,
      final String idSignature, final String proof) {
    final byte[] block = Identity.encode(id, type, publicKey, idSignature, proof);
    return Identity.decode(DagCbor.cid(block), block);
  }

  private static Identity identity(final String id, final String type, final byte[] publicKey,
      final byte[] idSignature, final byte[] proof) {
    final byte[] block = Identity.encode(id, type, publicKey, idSignature, proof);
    return Identity.decode(DagCbor.cid(block), block);
  }

  private static EntryVerifier entries(final PasskeyVectors.Case c) {
    return entries(c, writers(List.of(c.id())));
  }

  private static EntryVerifier entries(final PasskeyVectors.Case c, final AccessController ac) {
    final MemoryBlockstore store = new MemoryBlockstore();
    store.put(c.identity().cid(), c.identity().bytes());
    return new EntryVerifier(OrbitDbAddress.parse(V.logId), ac,
        new Identities(store, cid -> CompletableFuture.failedFuture(new IllegalStateException(
            "not here")), IdentityVerifiers.withPasskeys(RP), Runnable::run, 100),
        Runnable::run);
  }

  private static IpfsAccessController writers(final List<String> ids) {
    final byte[] manifest = IpfsAccessController.encode(ids);
    return IpfsAccessController.decode(AccessControllerRef.parse("/ipfs/" + DagCbor.cid(manifest)),
        manifest);
  }

  private static RejectReason rejection(final EntryVerifier verifier, final byte[] block) {
    try {
      verifier.verify(Entry.decode(block)).get(10, TimeUnit.SECONDS);
      return null;
    } catch (final ExecutionException e) {
      if (e.getCause() instanceof EntryRejectedException rejected) {
        return rejected.reason();
      }
      throw new AssertionError(e);
    } catch (final Exception e) {
      throw new AssertionError(e);
    }
  }

  // ---- valid vectors ------------------------------------------------------------------------

  @ParameterizedTest
  @ValueSource(strings = {"webauthn", "webauthn-varsig-p256", "webauthn-varsig-ed25519",
      "webauthn-varsig-multihash-p256", "worker-ed25519"})
  void verify_shouldAcceptIdentityAndEntries_whenMadeByTheProvider(final String name)
      throws Exception {
    final PasskeyVectors.Case c = V.get(name);
    final Identity identity = c.decoded();
    assertThat(identity.type()).isEqualTo(c.type());
    assertThat(verdict(RP, identity)).isEqualTo(IdentityVerifiers.VALID);
    final EntryVerifier verifier = entries(c);
    for (final PasskeyVectors.Block block : c.entries()) {
      final Identity writer = verifier.verify(Entry.decode(block.cid(), block.bytes()))
          .get(10, TimeUnit.SECONDS);
      assertThat(writer.id()).isEqualTo(c.id());
    }
  }

  @Test
  void canWrite_shouldNameTheDidKey_whenControllersListPasskeyIds() {
    final PasskeyVectors.Case c = V.get("webauthn-varsig-p256");
    assertThat(writers(List.of(c.id())).canWrite(c.decoded().id())).isTrue();
    assertThat(writers(List.of(V.get("webauthn").id())).canWrite(c.decoded().id())).isFalse();
    final OrbitDbAccessController orbitdb = new OrbitDbAccessController(
        AccessControllerRef.parse(V.logId.replace("/orbitdb/", "/orbitdb/")),
        writers(List.of(c.id())));
    assertThat(orbitdb.canWrite(c.id())).isTrue();
    assertThat(orbitdb.canWrite(V.get("worker-ed25519").id())).isFalse();
  }

  @Test
  void encode_shouldGiveBackTheVectorsBlock_forTextAndByteStringIdentities() {
    // The log stores an accepted identity by re-encoding it: the block must hash to its CID.
    for (final String name : List.of("webauthn", "webauthn-varsig-p256", "webauthn-varsig-ed25519",
        "worker-ed25519")) {
      final PasskeyVectors.Case c = V.get(name);
      assertThat(c.decoded().encode()).as(name).isEqualTo(c.identity().bytes());
    }
  }

  @Test
  void verify_shouldAcceptKeystoreProofs_whenNoRelyingPartyIsConfigured() {
    assertThat(verdict(WebAuthnConfig.DEFAULT, V.get("webauthn").decoded()))
        .isEqualTo(IdentityVerifiers.VALID);
    assertThat(verdict(WebAuthnConfig.DEFAULT, V.get("worker-ed25519").decoded()))
        .isEqualTo(IdentityVerifiers.VALID);
  }

  // ---- relying party ------------------------------------------------------------------------

  @ParameterizedTest
  @ValueSource(strings = {"webauthn-varsig-p256", "webauthn-varsig-ed25519",
      "webauthn-varsig-multihash-p256"})
  void verify_shouldRefuseVarsig_whenNoRelyingPartyIsConfigured(final String name) {
    assertThat(verdict(WebAuthnConfig.DEFAULT, V.get(name).decoded()))
        .isEqualTo(IdentityRefusal.RP_NOT_CONFIGURED);
  }

  @ParameterizedTest
  @ValueSource(strings = {"webauthn", "webauthn-varsig-p256", "webauthn-varsig-ed25519",
      "webauthn-varsig-multihash-p256"})
  void verify_shouldRefuse_whenOriginOrRpIdIsNotAllowed(final String name) {
    final Identity identity = V.get(name).decoded();
    assertThat(verdict(WebAuthnConfig.parse("https://other.example.test", ""), identity))
        .isEqualTo(IdentityRefusal.ORIGIN_NOT_ALLOWED);
    assertThat(verdict(WebAuthnConfig.parse(V.origin, "other.example.test"), identity))
        .isEqualTo(IdentityRefusal.RP_ID_NOT_ALLOWED);
  }

  // ---- webauthn (keystore) forgeries --------------------------------------------------------

  @Test
  void verify_shouldRefuseTheProvidersSyntheticKey_whenTheDidNamesNoSigningKey() {
    // Two hashes taken as coordinates are (almost surely) no point on the curve at all.
    assertThat(verdict(RP, V.get("webauthn-synthetic-key").decoded()))
        .isEqualTo(IdentityRefusal.KEY_MISMATCH);
  }

  /** An attacker's key store key claiming the victim's did:key, with {@code proof}. */
  private static Identity claimVictim(final String victimDid, final Secp256k1PrivateKey key,
      final java.util.function.BiFunction<String, String, String> proof) {
    final String publicKey = Hex.encode(key.publicKey().raw());
    final String idSignature = Hex.encode(key.sign(victimDid.getBytes(StandardCharsets.UTF_8)));
    return identity(victimDid, "webauthn", publicKey, idSignature,
        proof.apply(publicKey, idSignature));
  }

  private static String proof(final byte[] credentialId, final Assertion a) {
    final ObjectNode json = new ObjectMapper().createObjectNode();
    final Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    json.put("credentialId", b64.encodeToString(credentialId));
    json.put("dataHash", "unsigned");
    json.put("authenticatorData", b64.encodeToString(a.authenticatorData()));
    json.put("clientDataJSON", new String(a.clientDataJSON(), StandardCharsets.UTF_8));
    json.put("signature", b64.encodeToString(a.signature()));
    json.put("timestamp", 0);
    return b64.encodeToString(json.toString().getBytes(StandardCharsets.UTF_8));
  }

  private static String keystoreProof(final SoftPasskey passkey, final String publicKey,
      final String idSignature, final String origin, final String rpId, final int flags) {
    final byte[] credentialId = new byte[16];
    RANDOM.nextBytes(credentialId);
    final byte[] challenge = SoftPasskey.sha256(SoftPasskey.concat(credentialId,
        (publicKey + idSignature).getBytes(StandardCharsets.UTF_8)));
    return proof(credentialId, passkey.assertion(challenge, origin, rpId, flags));
  }

  @Test
  void verify_shouldRefuseVictimsDid_whenTheProofIsGarbageOrForeign() {
    final Identity victim = V.get("webauthn").decoded();
    final Secp256k1PrivateKey attacker = Secp256k1PrivateKey.generate(RANDOM);
    assertThat(verdict(RP, claimVictim(victim.id(), attacker, (pk, sig) -> "garbage")))
        .isEqualTo(IdentityRefusal.MALFORMED_PROOF);
    // The victim's own proof, replayed: it signs the victim's key store key, not the attacker's.
    assertThat(verdict(RP, claimVictim(victim.id(), attacker,
        (pk, sig) -> victim.publicKeySignature()))).isEqualTo(IdentityRefusal.CHALLENGE_MISMATCH);
  }

  @Test
  void verify_shouldRefuseVictimsDid_whenTheProofIsByAnotherPasskey() {
    final Identity victim = V.get("webauthn").decoded();
    final SoftPasskey attacker = new SoftPasskey(PasskeyKey.Algorithm.P256);
    assertThat(verdict(RP, claimVictim(victim.id(), Secp256k1PrivateKey.generate(RANDOM),
        (pk, sig) -> keystoreProof(attacker, pk, sig, V.origin, V.rpId,
            SoftPasskey.UP | SoftPasskey.UV)))).isEqualTo(IdentityRefusal.INVALID_SIGNATURE);
    // The same proof under the attacker's own did:key is a valid identity (of the attacker).
    assertThat(verdict(RP, claimVictim(attacker.didKey(), Secp256k1PrivateKey.generate(RANDOM),
        (pk, sig) -> keystoreProof(attacker, pk, sig, V.origin, V.rpId,
            SoftPasskey.UP | SoftPasskey.UV)))).isEqualTo(IdentityVerifiers.VALID);
  }

  @Test
  void verify_shouldRefuseKeystoreProofs_whenUpOrUvFlagIsMissing() {
    final SoftPasskey own = new SoftPasskey(PasskeyKey.Algorithm.P256);
    assertThat(verdict(RP, claimVictim(own.didKey(), Secp256k1PrivateKey.generate(RANDOM),
        (pk, sig) -> keystoreProof(own, pk, sig, V.origin, V.rpId, SoftPasskey.UV))))
        .isEqualTo(IdentityRefusal.USER_PRESENCE_MISSING);
    assertThat(verdict(RP, claimVictim(own.didKey(), Secp256k1PrivateKey.generate(RANDOM),
        (pk, sig) -> keystoreProof(own, pk, sig, V.origin, V.rpId, SoftPasskey.UP))))
        .isEqualTo(IdentityRefusal.USER_VERIFICATION_MISSING);
    assertThat(verdict(new WebAuthnConfig(RP.origins(), RP.rpIds(), false),
        claimVictim(own.didKey(), Secp256k1PrivateKey.generate(RANDOM),
            (pk, sig) -> keystoreProof(own, pk, sig, V.origin, V.rpId, SoftPasskey.UP))))
        .isEqualTo(IdentityVerifiers.VALID);
  }

  /** The vector's webauthn identity with its proof's DER signature changed by {@code change}. */
  private static Identity withProofSignature(
      final java.util.function.UnaryOperator<byte[]> change) throws Exception {
    final Identity victim = V.get("webauthn").decoded();
    final ObjectMapper json = new ObjectMapper();
    final ObjectNode proof = (ObjectNode) json.readTree(
        Base64.getUrlDecoder().decode(victim.publicKeySignature()));
    final byte[] der = Base64.getUrlDecoder().decode(proof.get("signature").asText());
    proof.put("signature",
        Base64.getUrlEncoder().withoutPadding().encodeToString(change.apply(der)));
    return identity(victim.id(), victim.type(), victim.publicKey(), victim.idSignature(),
        Base64.getUrlEncoder().withoutPadding().encodeToString(json.writeValueAsBytes(proof)));
  }

  @Test
  void verify_shouldRefuseNonCanonicalDer_whenTrailingBytesOrPaddedIntegers() throws Exception {
    assertThat(verdict(RP, withProofSignature(der -> Arrays.copyOf(der, der.length + 1))))
        .isEqualTo(IdentityRefusal.INVALID_SIGNATURE);
    assertThat(verdict(RP, withProofSignature(der -> {
      final byte[] longer = Arrays.copyOf(der, der.length + 1);
      longer[1]++;
      return longer;
    }))).isEqualTo(IdentityRefusal.INVALID_SIGNATURE);
    assertThat(verdict(RP, withProofSignature(PasskeyIdentityVerifiersTest::padR)))
        .isEqualTo(IdentityRefusal.INVALID_SIGNATURE);
    assertThat(verdict(RP, withProofSignature(der -> der))).isEqualTo(IdentityVerifiers.VALID);
  }

  /** r with a needless leading zero byte: same value, not DER. */
  private static byte[] padR(final byte[] der) {
    final int rLen = der[3];
    final byte[] out = new byte[der.length + 1];
    out[0] = 0x30;
    out[1] = (byte) (der[1] + 1);
    out[2] = 0x02;
    out[3] = (byte) (rLen + 1);
    out[4] = 0;
    System.arraycopy(der, 4, out, 5, der.length - 4);
    return out;
  }

  @Test
  void parseDer_shouldAcceptEitherHalfOfS_whenAuthenticatorsDoNotNormalise() throws Exception {
    // Authenticators (and Chromium's virtual one) emit S in either half and every WebAuthn
    // verifier accepts both; the high-S twin of the provider's signature verifies too.
    final Identity twin = withProofSignature(PasskeyIdentityVerifiersTest::otherHalfOfS);
    assertThat(verdict(RP, twin)).isEqualTo(IdentityVerifiers.VALID);
  }

  @Test
  void verify_shouldRefuseHighS_whenThePolicyRequiresLowS() throws Exception {
    // RELAY_WEBAUTHN_REQUIRE_LOW_S: of the provider's signature and its twin (S and n - S, both
    // valid ECDSA), exactly the one with S above n/2 is refused, before the signature check.
    final WebAuthnConfig lowS = new WebAuthnConfig(RP.origins(), RP.rpIds(), true, true);
    final Identity original = withProofSignature(der -> der);
    final Identity twin = withProofSignature(PasskeyIdentityVerifiersTest::otherHalfOfS);
    final boolean originalHigh = highS(original);
    assertThat(highS(twin)).isNotEqualTo(originalHigh);
    assertThat(verdict(lowS, originalHigh ? original : twin)).isEqualTo(IdentityRefusal.HIGH_S);
    assertThat(verdict(lowS, originalHigh ? twin : original)).isEqualTo(IdentityVerifiers.VALID);
    // The keystore proof without relying-party lists follows the same policy.
    final WebAuthnConfig unboundLowS = new WebAuthnConfig(Set.of(), Set.of(), true, true);
    assertThat(verdict(unboundLowS, originalHigh ? original : twin))
        .isEqualTo(IdentityRefusal.HIGH_S);
  }

  private static boolean highS(final Identity identity) throws Exception {
    final byte[] der = Base64.getUrlDecoder().decode(new ObjectMapper().readTree(
        Base64.getUrlDecoder().decode(identity.publicKeySignature())).get("signature").asText());
    return P256.parseDer(der).orElseThrow()[1].compareTo(P256.HALF_N) > 0;
  }

  private static byte[] otherHalfOfS(final byte[] der) {
    final BigInteger[] rs = P256.parseDer(der).orElseThrow();
    return der(rs[0], P256.N.subtract(rs[1]));
  }

  private static byte[] der(final BigInteger r, final BigInteger s) {
    final byte[] rb = r.toByteArray();
    final byte[] sb = s.toByteArray();
    final byte[] out = new byte[6 + rb.length + sb.length];
    out[0] = 0x30;
    out[1] = (byte) (4 + rb.length + sb.length);
    out[2] = 0x02;
    out[3] = (byte) rb.length;
    System.arraycopy(rb, 0, out, 4, rb.length);
    out[4 + rb.length] = 0x02;
    out[5 + rb.length] = (byte) sb.length;
    System.arraycopy(sb, 0, out, 6 + rb.length, sb.length);
    return out;
  }

  // ---- webauthn-varsig forgeries ------------------------------------------------------------

  private static Identity varsigIdentity(final SoftPasskey signer, final String id,
      final byte[] publicKey, final String origin, final String rpId, final int flags) {
    final byte[] idSig = signer.varsigOver(id.getBytes(StandardCharsets.UTF_8),
        WebAuthnVarsigIdentityVerifier.LABEL_ID, origin, rpId, flags);
    final byte[] pkSig = signer.varsigOver(SoftPasskey.concat(publicKey, idSig),
        WebAuthnVarsigIdentityVerifier.LABEL_PUBLIC_KEY, origin, rpId, flags);
    return identity(id, "webauthn-varsig", publicKey, idSig, pkSig);
  }

  @ParameterizedTest
  @ValueSource(strings = {"P256", "ED25519"})
  void verify_shouldRefuseVarsig_whenForgedForAVictim(final PasskeyKey.Algorithm algorithm) {
    final String name = algorithm == PasskeyKey.Algorithm.P256
        ? "webauthn-varsig-p256" : "webauthn-varsig-ed25519";
    final Identity victim = V.get(name).decoded();
    final byte[] victimKey = Hex.decode(victim.publicKey()).orElseThrow();
    final SoftPasskey attacker = new SoftPasskey(algorithm);
    final int ok = SoftPasskey.UP | SoftPasskey.UV;
    // Victim's id and key, signatures by another passkey.
    assertThat(verdict(RP, varsigIdentity(attacker, victim.id(), victimKey, V.origin, V.rpId,
        ok))).isEqualTo(IdentityRefusal.INVALID_SIGNATURE);
    // Victim's id, the attacker's key: the did:key does not name it.
    assertThat(verdict(RP, varsigIdentity(attacker, victim.id(), attacker.publicKey, V.origin,
        V.rpId, ok))).isEqualTo(IdentityRefusal.KEY_MISMATCH);
    // Garbage proofs.
    assertThat(verdict(RP, identity(victim.id(), "webauthn-varsig", victimKey,
        "garbage".getBytes(StandardCharsets.UTF_8), new byte[] {1, 2, 3})))
        .isEqualTo(IdentityRefusal.MALFORMED_PROOF);
    // The attacker's own, well-made identity passes: the checks above are not vacuous.
    assertThat(verdict(RP, varsigIdentity(attacker, attacker.compressedDidKey(),
        attacker.publicKey, V.origin, V.rpId, ok))).isEqualTo(IdentityVerifiers.VALID);
    assertThat(verdict(RP, varsigIdentity(attacker, attacker.compressedDidKey(),
        attacker.publicKey, V.origin, V.rpId, SoftPasskey.UV)))
        .isEqualTo(IdentityRefusal.USER_PRESENCE_MISSING);
    assertThat(verdict(RP, varsigIdentity(attacker, attacker.compressedDidKey(),
        attacker.publicKey, V.origin, V.rpId, SoftPasskey.UP)))
        .isEqualTo(IdentityRefusal.USER_VERIFICATION_MISSING);
    assertThat(verdict(RP, varsigIdentity(attacker, attacker.compressedDidKey(),
        attacker.publicKey, "https://evil.example.test", V.rpId, ok)))
        .isEqualTo(IdentityRefusal.ORIGIN_NOT_ALLOWED);
    assertThat(verdict(RP, varsigIdentity(attacker, attacker.compressedDidKey(),
        attacker.publicKey, V.origin, "evil.example.test", ok)))
        .isEqualTo(IdentityRefusal.RP_ID_NOT_ALLOWED);
  }

  @Test
  void verify_shouldRefuseVarsig_whenTheSignatureHasTrailingBytes() {
    final Identity victim = V.get("webauthn-varsig-p256").decoded();
    final byte[] idSig = Hex.decode(victim.idSignature()).orElseThrow();
    final byte[] longer = Arrays.copyOf(idSig, idSig.length + 1);
    assertThat(verdict(RP, identity(victim.id(), victim.type(),
        Hex.decode(victim.publicKey()).orElseThrow(), longer,
        Hex.decode(victim.publicKeySignature()).orElseThrow())))
        .isEqualTo(IdentityRefusal.INVALID_SIGNATURE);
  }

  @Test
  void expectedChallenge_shouldRecogniseOnlyTheTwoFormats() {
    final byte[] payload = "p".getBytes(StandardCharsets.UTF_8);
    assertThat(WebAuthnVarsigIdentityVerifier.expectedChallenge(new byte[32], ENTRY, payload))
        .hasSize(32);
    final byte[] multihash = new byte[34];
    multihash[0] = 0x12;
    multihash[1] = 0x20;
    assertThat(WebAuthnVarsigIdentityVerifier.expectedChallenge(multihash, ENTRY, payload))
        .hasSize(34).startsWith(0x12, 0x20);
    assertThat(WebAuthnVarsigIdentityVerifier.expectedChallenge(new byte[33], ENTRY, payload))
        .isNull();
    assertThat(WebAuthnVarsigIdentityVerifier.expectedChallenge(new byte[34], ENTRY, payload))
        .isNull();
  }

  // ---- worker-ed25519 forgeries -------------------------------------------------------------

  @Test
  void verify_shouldRefuseWorkerIdentity_whenTheIdIsAnotherKeysDid() {
    final Identity victim = V.get("worker-ed25519").decoded();
    final SoftPasskey attacker = new SoftPasskey(PasskeyKey.Algorithm.ED25519);
    final byte[] idSig = attacker.sign(victim.id().getBytes(StandardCharsets.UTF_8));
    final byte[] pkSig = attacker.sign(SoftPasskey.concat(attacker.publicKey, idSig));
    assertThat(verdict(RP, identity(victim.id(), "worker-ed25519", attacker.publicKey, idSig,
        pkSig))).isEqualTo(IdentityRefusal.KEY_MISMATCH);
    final byte[] ownIdSig = attacker.sign(attacker.didKey().getBytes(StandardCharsets.UTF_8));
    assertThat(verdict(RP, identity(attacker.didKey(), "worker-ed25519", attacker.publicKey,
        ownIdSig, attacker.sign(SoftPasskey.concat(attacker.publicKey, ownIdSig)))))
        .isEqualTo(IdentityVerifiers.VALID);
    assertThat(verdict(RP, identity(attacker.didKey(), "worker-ed25519", attacker.publicKey,
        ownIdSig, new byte[64]))).isEqualTo(IdentityRefusal.INVALID_SIGNATURE);
  }

  @Test
  void verify_shouldRefuseBinaryFields_whenTheTypeWritesText() {
    final Identity worker = V.get("worker-ed25519").decoded();
    assertThat(verdict(RP, identity(worker.id(), "webauthn",
        Hex.decode(worker.publicKey()).orElseThrow(), new byte[64], new byte[64])))
        .isEqualTo(IdentityRefusal.MALFORMED_PROOF);
    assertThat(verdict(RP, identity(worker.id(), "worker-ed25519", worker.publicKey(),
        worker.idSignature(), worker.publicKeySignature())))
        .isEqualTo(IdentityRefusal.MALFORMED_PROOF);
  }

  // ---- entries ------------------------------------------------------------------------------

  private static byte[] withSig(final byte[] block, final byte[] sig) {
    return io.relaypinner.orbitdb.Crafting.withFields(block, Map.of("sig", DagCborValue.of(sig)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"webauthn-varsig-p256", "webauthn-varsig-ed25519"})
  void verify_shouldRefuseVarsigEntries_whenSignedByAnotherKeyOrForAnotherContext(
      final String name) {
    final PasskeyVectors.Case c = V.get(name);
    final EntryVerifier verifier = entries(c);
    final byte[] real = c.entries().get(0).bytes();
    final byte[] signed = Entry.decode(real).signedBytes();
    final PasskeyKey.Algorithm algorithm = name.endsWith("p256")
        ? PasskeyKey.Algorithm.P256 : PasskeyKey.Algorithm.ED25519;
    final SoftPasskey attacker = new SoftPasskey(algorithm);
    final int ok = SoftPasskey.UP | SoftPasskey.UV;
    assertThat(rejection(verifier, withSig(real, attacker.varsigOver(signed, ENTRY, V.origin,
        V.rpId, ok)))).isEqualTo(RejectReason.FORGED_SIGNATURE);
    // The identity's own signature of the id (another context) as the entry's signature.
    assertThat(rejection(verifier, withSig(real,
        Hex.decode(c.decoded().idSignature()).orElseThrow())))
        .isEqualTo(RejectReason.FORGED_SIGNATURE);
    // Another entry's valid signature.
    assertThat(rejection(verifier, withSig(real, Hex.decode(Entry.decode(
        c.entries().get(1).bytes()).sig()).orElseThrow())))
        .isEqualTo(RejectReason.FORGED_SIGNATURE);
    assertThat(rejection(verifier, io.relaypinner.orbitdb.Crafting.forgedPayload(real)))
        .isEqualTo(RejectReason.FORGED_SIGNATURE);
    assertThat(rejection(verifier, real)).isNull();
  }

  @Test
  void verify_shouldRefuseWorkerAndKeystoreEntries_whenSignedByAnotherKey() {
    final PasskeyVectors.Case worker = V.get("worker-ed25519");
    final byte[] real = worker.entries().get(0).bytes();
    final SoftPasskey attacker = new SoftPasskey(PasskeyKey.Algorithm.ED25519);
    assertThat(rejection(entries(worker), withSig(real,
        attacker.sign(Entry.decode(real).signedBytes())))).isEqualTo(RejectReason.FORGED_SIGNATURE);

    final PasskeyVectors.Case keystore = V.get("webauthn");
    final byte[] entry = keystore.entries().get(0).bytes();
    final Secp256k1PrivateKey other = Secp256k1PrivateKey.generate(RANDOM);
    assertThat(rejection(entries(keystore), io.relaypinner.orbitdb.Crafting.signedByOtherKey(
        entry, other))).isEqualTo(RejectReason.KEY_IDENTITY_MISMATCH);
    assertThat(rejection(entries(keystore), io.relaypinner.orbitdb.Crafting.withFields(entry,
        Map.of("sig", DagCborValue.of(Hex.encode(other.sign(Entry.decode(entry)
            .signedBytes())))))))
        .isEqualTo(RejectReason.FORGED_SIGNATURE);
  }

  @Test
  void verify_shouldRefuseEntries_whenTheWriterIsNotListed() {
    final PasskeyVectors.Case c = V.get("webauthn-varsig-ed25519");
    final EntryVerifier verifier = entries(c, writers(List.of(V.get("webauthn").id())));
    assertThat(rejection(verifier, c.entries().get(0).bytes()))
        .isEqualTo(RejectReason.UNAUTHORIZED_WRITER);
  }

  @Test
  void identityHash_shouldBeTheVectorsCid() {
    final PasskeyVectors.Case c = V.get("webauthn-varsig-p256");
    assertThat(DagCbor.cid(c.identity().bytes())).isEqualTo(c.identity().cid());
    final Cid roundTrip = DagCbor.cid(Identity.encode(c.id(), c.type(),
        Hex.decode(c.decoded().publicKey()).orElseThrow(),
        Hex.decode(c.decoded().idSignature()).orElseThrow(),
        Hex.decode(c.decoded().publicKeySignature()).orElseThrow()));
    assertThat(roundTrip).isEqualTo(c.identity().cid());
  }
}
