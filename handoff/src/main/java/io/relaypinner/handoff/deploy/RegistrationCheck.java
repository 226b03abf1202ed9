package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.records.MessageVerifier;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.SignedPayload;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.WalletFormatException;
import java.time.Clock;
import java.util.Optional;

/**
 * The deployer's own check of a guest's bootstrap registration (notes/handoff.md 7.2), done
 * independently of the {@code trustMode} the guest claims:
 *
 * <ul>
 *   <li>the message is signed by its sender, the guest's publisher address, and names this
 *       registration id and PeerId;
 *   <li>{@code relayProof} is the publisher's signature over a payload with the same PeerId and
 *       registration id;
 *   <li>{@code dual-key-attested} only when {@code authorization} is signed by the owner it names
 *       (this deployment's wallet), binds this publisher address and this PeerId, and has not
 *       expired, and the content's owner is that owner; {@code wallet-signed} otherwise.
 * </ul>
 */
public final class RegistrationCheck {
  private RegistrationCheck() {}

  /**
   * The verified trust mode of {@code post}, or empty when it is not a valid registration of this
   * relay.
   */
  public static Optional<String> trustMode(final PostRecord post, final String registrationId,
      final EthAddress owner, final EthAddress publisher, final String peerId,
      final Clock clock) {
    try {
      if (!GuestRecords.REGISTRATION_POST_TYPE.equals(post.type())) {
        return Optional.empty();
      }
      final EthAddress sender = new MessageVerifier().verify(post.toMessage()).sender();
      final JsonNode content = post.content();
      if (!sender.equals(publisher)
          || !registrationId.equals(content.path("registrationId").asText())
          || !peerId.equals(content.path("peerId").asText())
          || !publisher.equals(address(content.path("publisherAddress")))) {
        return Optional.empty();
      }
      final SignedPayload proof = SignedPayload.fromJson(content.get("relayProof"));
      if (!proof.isSignedBy(publisher) || !peerId.equals(proof.payload().path("peerId").asText())
          || !registrationId.equals(proof.payload().path("registrationId").asText())) {
        return Optional.empty();
      }
      final JsonNode authorization = content.get("authorization");
      if (authorization == null || authorization.isNull()) {
        return Optional.of(GuestRecords.WALLET_SIGNED);
      }
      final SignedPayload signed = SignedPayload.fromJson(authorization);
      final JsonNode payload = signed.payload();
      final JsonNode expires = payload.get("expiresAt");
      final boolean dual = signed.isSignedBy(owner)
          && owner.equals(address(payload.path("ownerAddress")))
          && owner.equals(address(content.path("ownerAddress")))
          && publisher.equals(address(payload.path("publisherAddress")))
          && peerId.equals(payload.path("peerId").asText())
          && (expires == null || expires.isNull()
              || expires.isNumber() && expires.asLong() > clock.millis());
      return Optional.of(dual ? GuestRecords.DUAL_KEY_ATTESTED : GuestRecords.WALLET_SIGNED);
    } catch (final RecordRejectedException | WalletFormatException e) {
      return Optional.empty();
    }
  }

  private static EthAddress address(final JsonNode node) {
    return EthAddress.parse(node.asText(""));
  }
}
