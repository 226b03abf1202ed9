package io.relaypinner.handoff.records;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.json.CanonicalJson;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.util.List;
import org.junit.jupiter.api.Test;

class MessageVerifierTest {
  private static final EthPrivateKey OWNER = EthPrivateKey.parse(
      "0x0123456789012345678901234567890123456789012345678901234567890123");
  private static final EthPrivateKey OTHER = EthPrivateKey.parse(
      "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");

  private final RecordSigner signer = new RecordSigner(OWNER, new TickingClock(1_784_808_000_123L));
  private final MessageVerifier verifier = new MessageVerifier();

  private static ObjectNode entries() {
    final ObjectNode entries = JsonNodeFactory.instance.objectNode();
    entries.putObject("token-1").put("status", "pending").put("profile", "orbitdb-relay");
    return entries;
  }

  private static RecordRejectedException rejection(final AlephMessage message,
      final MessageVerifier verifier) {
    try {
      verifier.verify(message);
    } catch (final RecordRejectedException e) {
      return e;
    }
    throw new AssertionError("message was accepted");
  }

  @Test
  void verify_shouldAcceptEachKind_whenBuiltBySigner() {
    final AlephMessage aggregate = signer.aggregate("vm-bootstrap-config", entries(), "TEST");
    final VerifiedMessage verified = verifier.verify(aggregate);
    assertThat(verified.sender()).isEqualTo(OWNER.address());
    assertThat(verified.content()).isInstanceOf(RecordContent.Aggregate.class);
    assertThat(aggregate.itemContent()).isEqualTo("{\"address\":\""
        + OWNER.address() + "\",\"content\":{\"token-1\":{\"profile\":\"orbitdb-relay\","
        + "\"status\":\"pending\"}},\"key\":\"vm-bootstrap-config\",\"time\":1784808000.123}");
    assertThat(aggregate.time()).isEqualTo(1784808000.123);
    assertThat(aggregate.signedText()).isEqualTo(
        "ETH\n" + OWNER.address() + "\nAGGREGATE\n" + aggregate.itemHash());

    final AlephMessage post = signer.post("vm-bootstrap-config-status", "vm-bootstrap-config",
        JsonNodeFactory.instance.objectNode().put("status", "applied"), "simple-todo");
    assertThat(verifier.verify(post).content()).isInstanceOf(RecordContent.Post.class);
    final AlephMessage forget = signer.forget(List.of(post.itemHash()), List.of(), "done", null);
    assertThat(((RecordContent.Forget) verifier.verify(forget).content()).hashes())
        .containsExactly(post.itemHash());
  }

  @Test
  void verify_shouldRejectForgedSignature() {
    final AlephMessage real = signer.aggregate("k", entries(), "TEST");
    // Same envelope, signed by another key: the sender did not sign it.
    final String forged = OTHER.signPersonal(real.signedText()).toHex();
    final AlephMessage message = new AlephMessage(real.sender(), real.chain(), real.type(),
        real.itemType(), real.itemContent(), real.itemHash(), real.time(), real.channel(), forged);
    final RecordRejectedException e = rejection(message, verifier);
    assertThat(e.code()).isEqualTo(ErrorCodes.INVALID_SIGNATURE);
    assertThat(e.httpStatus()).isEqualTo(422);
  }

  @Test
  void verify_shouldRejectUnsignedAndGarbageSignatures() {
    final AlephMessage real = signer.aggregate("k", entries(), "TEST");
    for (final String signature : new String[] {null, "", "0x00", "0x" + "ff".repeat(65)}) {
      final AlephMessage message = new AlephMessage(real.sender(), real.chain(), real.type(),
          real.itemType(), real.itemContent(), real.itemHash(), real.time(), real.channel(),
          signature);
      assertThat(rejection(message, verifier).code()).isEqualTo(ErrorCodes.INVALID_SIGNATURE);
    }
  }

  @Test
  void verify_shouldRejectWrongItemHash_evenWhenTheSenderSignedIt() {
    final AlephMessage real = signer.aggregate("k", entries(), "TEST");
    final String content = real.itemContent().replace("pending", "applied");
    // A correctly signed envelope whose hash does not match its content.
    final String signature = OWNER.signPersonal(real.signedText()).toHex();
    final AlephMessage message = new AlephMessage(real.sender(), real.chain(), real.type(),
        real.itemType(), content, real.itemHash(), real.time(), real.channel(), signature);
    assertThat(rejection(message, verifier).code()).isEqualTo(ErrorCodes.ITEM_HASH_MISMATCH);
  }

  @Test
  void verify_shouldRejectContentOwnedByAnotherAddress() {
    final ObjectNode content = new RecordContent.Aggregate(OTHER.address().toString(), "k",
        entries(), 1).toJson();
    final String itemContent = CanonicalJson.write(content);
    final String hash = AlephMessage.itemHashOf(itemContent);
    final String sender = OWNER.address().toString();
    final String signature = OWNER.signPersonal(
        AlephMessage.signedText("ETH", sender, "AGGREGATE", hash)).toHex();
    final AlephMessage message = new AlephMessage(sender, "ETH", MessageType.AGGREGATE, "inline",
        itemContent, hash, 1, null, signature);
    assertThat(rejection(message, verifier).code()).isEqualTo(ErrorCodes.SENDER_MISMATCH);
  }

  @Test
  void verify_shouldRejectOtherChainsItemTypesAndOversizedContent() {
    final AlephMessage real = signer.aggregate("k", entries(), "TEST");
    final AlephMessage sol = new AlephMessage(real.sender(), "SOL", real.type(), real.itemType(),
        real.itemContent(), real.itemHash(), real.time(), real.channel(), real.signature());
    assertThat(rejection(sol, verifier).code()).isEqualTo(ErrorCodes.UNSUPPORTED_CHAIN);
    final AlephMessage ipfs = new AlephMessage(real.sender(), "ETH", real.type(), "ipfs",
        real.itemContent(), real.itemHash(), real.time(), real.channel(), real.signature());
    assertThat(rejection(ipfs, verifier).code()).isEqualTo(ErrorCodes.UNSUPPORTED_ITEM_TYPE);
    final RecordRejectedException tooBig = rejection(real, new MessageVerifier(50));
    assertThat(tooBig.httpStatus()).isEqualTo(413);
  }

  @Test
  void verify_shouldRejectContentThatIsNotTheTypesShape() {
    final String sender = OWNER.address().toString();
    for (final String itemContent : new String[] {
        "[]", "{\"address\":\"" + sender + "\",\"key\":\"k\",\"time\":1}",
        "{\"address\":\"" + sender + "\",\"key\":\"k\",\"content\":[],\"time\":1}",
        "{\"address\":\"" + sender + "\",\"key\":\"k\",\"content\":{},\"time\":-1}",
        "{\"address\":\"" + sender + "\",\"key\":\"k\",\"key\":\"j\",\"content\":{},\"time\":1}",
        "not json"}) {
      final String hash = AlephMessage.itemHashOf(itemContent);
      final String signature = OWNER.signPersonal(
          AlephMessage.signedText("ETH", sender, "AGGREGATE", hash)).toHex();
      final AlephMessage message = new AlephMessage(sender, "ETH", MessageType.AGGREGATE,
          "inline", itemContent, hash, 1, null, signature);
      assertThat(rejection(message, verifier).code()).as(itemContent)
          .isEqualTo(ErrorCodes.INVALID_MESSAGE);
    }
  }

  @Test
  void fromJson_shouldRoundTripTheEnvelope() {
    final AlephMessage message = signer.post("t", null, JsonNodeFactory.instance.textNode("x"),
        null);
    assertThat(AlephMessage.fromJson(message.toJson())).isEqualTo(message);
    assertThat(message.toJson().toString()).contains("\"time\":1784808000.123");
  }

  @Test
  void signedPayload_shouldVerifyWhateverTheTransportedKeyOrder() throws Exception {
    final ObjectNode payload = JsonNodeFactory.instance.objectNode()
        .put("ownerAddress", OWNER.address().toString()).put("peerId", "12D3KooW")
        .put("issuedAt", 1784808300000L);
    final SignedPayload signed = signer.signPayload(payload);
    final String reordered = "{\"signature\":\"" + signed.signature().toHex()
        + "\",\"payload\":{\"issuedAt\":1784808300000,\"peerId\":\"12D3KooW\","
        + "\"ownerAddress\":\"" + OWNER.address().toLowerHex()
        + "\"},\"scheme\":\"personal_sign\"}";
    final SignedPayload read = SignedPayload.fromJson(RecordJson.MAPPER.readTree(reordered));
    // Lowercasing the address changed the payload: the signature must no longer match.
    assertThat(read.isSignedBy(OWNER.address())).isFalse();
    final SignedPayload same = SignedPayload.fromJson(RecordJson.MAPPER.readTree(
        reordered.replace(OWNER.address().toLowerHex(), OWNER.address().toString())));
    assertThat(same.isSignedBy(OWNER.address())).isTrue();
    assertThat(same.recoverSigner()).contains(OWNER.address());
  }

  @Test
  void signedPayload_shouldRecoverNobody_whenThePayloadHasNoCanonicalForm() throws Exception {
    final SignedPayload signed = signer.signPayload(JsonNodeFactory.instance.objectNode()
        .put("n", 1));
    final SignedPayload huge = new SignedPayload(
        RecordJson.MAPPER.readTree("{\"n\":1" + "0".repeat(400) + "}"), signed.signature());
    assertThat(huge.recoverSigner()).isEmpty();
    assertThat(huge.isSignedBy(OWNER.address())).isFalse();
  }
}
