package io.relaypinner.handoff.records;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.json.CanonicalJson;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import io.relaypinner.handoff.wallet.EthSignature;
import io.relaypinner.handoff.wallet.PersonalSign;
import io.relaypinner.handoff.wallet.WalletFormatException;
import java.util.Objects;
import java.util.Optional;

/**
 * A JSON payload signed inside a record's content (an owner authorization, an acknowledgement
 * proof): {@code {"scheme":"personal_sign","payload":{…},"signature":"0x…"}}, where the
 * signature is EIP-191 {@code personal_sign} over the RFC 8785 canonical JSON of
 * {@code payload}. Both sides derive the signed text from the payload, so key order, spacing and
 * number forms of the transported JSON never matter, and a member is either present (even as
 * {@code null}) or absent for both.
 */
public record SignedPayload(JsonNode payload, EthSignature signature) {
  /** The only scheme. */
  public static final String SCHEME = "personal_sign";

  public SignedPayload {
    Objects.requireNonNull(payload, "payload");
    Objects.requireNonNull(signature, "signature");
  }

  /** Signs the canonical form of {@code payload} with {@code key}. */
  public static SignedPayload sign(final EthPrivateKey key, final JsonNode payload) {
    return new SignedPayload(payload.deepCopy(),
        key.signPersonal(CanonicalJson.writeBytes(payload)));
  }

  /**
   * The signer's address, or empty when the signature does not recover or the payload has no
   * canonical form (a number too large for a double, a lone surrogate).
   */
  public Optional<EthAddress> recoverSigner() {
    final byte[] canonical;
    try {
      canonical = CanonicalJson.writeBytes(payload);
    } catch (final IllegalArgumentException e) {
      return Optional.empty();
    }
    return PersonalSign.recover(canonical, signature);
  }

  /** True when {@code expected} signed this payload. */
  public boolean isSignedBy(final EthAddress expected) {
    return recoverSigner().map(expected::equals).orElse(false);
  }

  /** The transported object. */
  public ObjectNode toJson() {
    final ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("scheme", SCHEME);
    node.set("payload", payload);
    node.put("signature", signature.toHex());
    return node;
  }

  /**
   * Reads the transported object.
   *
   * @throws RecordRejectedException 422 when the shape, scheme or signature is malformed
   */
  public static SignedPayload fromJson(final JsonNode node) {
    if (node == null || !node.isObject() || !SCHEME.equals(RecordJson.text(node, "scheme"))
        || node.get("payload") == null) {
      throw RecordRejectedException.invalid(ErrorCodes.INVALID_MESSAGE,
          "a signed payload is {\"scheme\":\"personal_sign\",\"payload\":…,\"signature\":…}");
    }
    try {
      return new SignedPayload(node.get("payload"),
          EthSignature.parse(RecordJson.text(node, "signature")));
    } catch (final WalletFormatException e) {
      throw RecordRejectedException.invalid(ErrorCodes.INVALID_SIGNATURE, e.getMessage());
    }
  }
}
