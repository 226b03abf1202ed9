package io.relaypinner.handoff.guest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.SignedPayload;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.WalletFormatException;
import java.io.IOException;
import java.time.Clock;
import java.util.Base64;
import java.util.Objects;

/**
 * A verified owner authorization (notes/handoff.md 6.4): the owner's statement, signed with
 * EIP-191 over the RFC 8785 canonical JSON of its payload, that one publisher address and one
 * PeerId act for it. Transported as {@code bootstrap_owner_authorization_b64} (base64 of the
 * JSON {@code {"scheme":"personal_sign","payload":{…},"signature":"0x…"}}). The guest holds one
 * only after checking that it is signed by the owner it names, binds this guest's publisher address and
 * PeerId, and has not expired; otherwise it registers in wallet-signed mode.
 *
 * @param owner the owner who signed it
 * @param json the transported object (put in registrations as {@code authorization})
 * @param base64 the transported text
 */
public record OwnerAuthorization(EthAddress owner, JsonNode json, String base64) {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** Why an authorization cannot be used. */
  public static final class InvalidAuthorizationException extends Exception {
    private static final long serialVersionUID = 1L;

    InvalidAuthorizationException(final String message) {
      super(message);
    }
  }

  /**
   * Decodes and verifies {@code base64} for this guest.
   *
   * @param expectedOwner the owner the guest was told about, when it was (then it must match)
   * @throws InvalidAuthorizationException saying what does not hold
   */
  public static OwnerAuthorization verify(final String base64, final EthAddress expectedOwner,
      final EthAddress publisher, final String peerId, final Clock clock)
      throws InvalidAuthorizationException {
    Objects.requireNonNull(publisher, "publisher");
    final JsonNode json;
    final SignedPayload signed;
    try {
      json = MAPPER.readTree(Base64.getDecoder().decode(base64.strip()));
      signed = SignedPayload.fromJson(json);
    } catch (final IllegalArgumentException | IOException | RecordRejectedException e) {
      throw new InvalidAuthorizationException("not a signed authorization: " + e.getMessage());
    }
    final JsonNode payload = signed.payload();
    final EthAddress owner = address(payload, "ownerAddress");
    if (expectedOwner != null && !expectedOwner.equals(owner)) {
      throw new InvalidAuthorizationException("it names owner " + owner + ", not " + expectedOwner);
    }
    if (!signed.isSignedBy(owner)) {
      throw new InvalidAuthorizationException("it is not signed by its owner " + owner);
    }
    if (!publisher.equals(address(payload, "publisherAddress"))) {
      throw new InvalidAuthorizationException("it authorizes publisher "
          + payload.path("publisherAddress").asText() + ", not this guest's " + publisher);
    }
    if (!peerId.equals(payload.path("peerId").asText())) {
      throw new InvalidAuthorizationException("it authorizes peer "
          + payload.path("peerId").asText() + ", not this guest's " + peerId);
    }
    final JsonNode expires = payload.get("expiresAt");
    if (expires != null && !expires.isNull()
        && (!expires.isNumber() || expires.asLong() <= clock.millis())) {
      throw new InvalidAuthorizationException("it expired (expiresAt " + expires + ")");
    }
    return new OwnerAuthorization(owner, json, base64.strip());
  }

  private static EthAddress address(final JsonNode payload, final String field)
      throws InvalidAuthorizationException {
    try {
      return EthAddress.parse(payload.path(field).asText(null));
    } catch (final WalletFormatException e) {
      throw new InvalidAuthorizationException("payload." + field + ": " + e.getMessage());
    }
  }
}
