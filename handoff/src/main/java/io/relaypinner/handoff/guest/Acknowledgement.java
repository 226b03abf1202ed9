package io.relaypinner.handoff.guest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.json.CanonicalJson;
import io.relaypinner.handoff.records.MessageVerifier;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.SignedPayload;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.PeerId;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * The guest's acknowledgement of a pull configuration (notes/handoff.md 3.5, CONTRACT.md): a POST
 * of type {@code vm-bootstrap-config-status}, ref {@code vm-bootstrap-config}, channel
 * {@code simple-todo}, sent and signed by the guest's publisher key. Its content has the public
 * image's fields plus two proofs that make it verifiable by anyone, unlike the image's (notes 3.7):
 *
 * <ul>
 *   <li>{@code proof}: the publisher key's EIP-191 signature over the RFC 8785 canonical JSON of
 *       {@code {deploymentToken, ownerAddress, instanceItemHash, status, peerId, publisherAddress,
 *       updatedAt}} (the same key signs the message, so the binding holds even when the content is
 *       read without its envelope);
 *   <li>{@code peerProof}: {@code {"scheme":"libp2p-key","signature":<base64>}}, the relay's
 *       libp2p key signing the same canonical bytes, so the PeerId is proven, not just claimed.
 * </ul>
 */
public final class Acknowledgement {
  /** Scheme name of {@code peerProof}. */
  public static final String PEER_PROOF_SCHEME = "libp2p-key";

  private Acknowledgement() {}

  /**
   * A verified acknowledgement.
   *
   * @param token the deployment token it acknowledges
   * @param publisher its sender, the guest's publisher address
   * @param peerId the relay's PeerId, proven by its key
   * @param probeMultiaddrs addresses to probe
   * @param browserMultiaddrs addresses browsers can dial
   * @param content the post's content
   */
  public record Verified(String token, EthAddress publisher, String peerId,
      List<String> probeMultiaddrs, List<String> browserMultiaddrs, JsonNode content) {}

  /** The content the guest posts. */
  public static ObjectNode content(final JsonNode entry, final String token,
      final GuestStateDir state, final GuestAddresses addresses,
      final Optional<OwnerAuthorization> authorization, final Instant now) {
    final JsonNodeFactory f = JsonNodeFactory.instance;
    final String peerId = state.relayPeerId().toBase58();
    final ObjectNode proofPayload = f.objectNode();
    proofPayload.put("deploymentToken", token);
    proofPayload.put("ownerAddress", entry.path("ownerAddress").asText(""));
    proofPayload.put("instanceItemHash", entry.path("instanceItemHash").asText(""));
    proofPayload.put("status", "applied");
    proofPayload.put("peerId", peerId);
    proofPayload.put("publisherAddress", state.publisherKey().address());
    proofPayload.put("updatedAt", now.truncatedTo(ChronoUnit.SECONDS).toString());
    final ObjectNode content = f.objectNode();
    content.put("deploymentToken", token);
    content.put("status", "applied");
    content.put("profile", entry.path("profile").asText(""));
    content.put("ownerAddress", entry.path("ownerAddress").asText(""));
    content.put("instanceItemHash", entry.path("instanceItemHash").asText(""));
    content.put("updatedAt", proofPayload.get("updatedAt").asText());
    content.put("publisherAddress", state.publisherKey().address());
    content.set("authorization", authorization.map(OwnerAuthorization::json)
        .orElse(f.nullNode()));
    content.put("peerId", peerId);
    addresses.probe().forEach(content.putArray("probeMultiaddrs")::add);
    addresses.browserBootstrap().forEach(content.putArray("browserBootstrapMultiaddrs")::add);
    content.set("proof", SignedPayload.sign(state.publisherKey().ethKey(), proofPayload)
        .toJson());
    final ObjectNode peerProof = content.putObject("peerProof");
    peerProof.put("scheme", PEER_PROOF_SCHEME);
    peerProof.put("signature", Base64.getEncoder().encodeToString(
        state.signAsRelay(CanonicalJson.writeBytes(proofPayload))));
    return content;
  }

  /**
   * Checks a listed post: the message is signed by its sender, the content names that sender as
   * publisher, the proof is the sender's over this token and the content's PeerId, and the peer
   * proof is made by that PeerId's key.
   *
   * @return the verified acknowledgement, or empty (with nothing trusted) when anything fails
   */
  public static Optional<Verified> verify(final PostRecord post, final String token) {
    try {
      if (!GuestRecords.ACK_POST_TYPE.equals(post.type())) {
        return Optional.empty();
      }
      final EthAddress sender = new MessageVerifier().verify(post.toMessage()).sender();
      final JsonNode content = post.content();
      if (!token.equals(content.path("deploymentToken").asText())
          || !sender.equals(EthAddress.parse(content.path("publisherAddress").asText("")))) {
        return Optional.empty();
      }
      final SignedPayload proof = SignedPayload.fromJson(content.get("proof"));
      final JsonNode payload = proof.payload();
      final String peerId = content.path("peerId").asText("");
      if (!proof.isSignedBy(sender) || !token.equals(payload.path("deploymentToken").asText())
          || !peerId.equals(payload.path("peerId").asText())
          || !sender.equals(EthAddress.parse(payload.path("publisherAddress").asText("")))
          || !"applied".equals(payload.path("status").asText())) {
        return Optional.empty();
      }
      final JsonNode peerProof = content.path("peerProof");
      final Optional<byte[]> keyBytes = PeerId.parse(peerId).publicKeyBytes();
      if (!PEER_PROOF_SCHEME.equals(peerProof.path("scheme").asText()) || keyBytes.isEmpty()) {
        return Optional.empty();
      }
      final PublicKey key = Keys.unmarshalPublicKey(keyBytes.get());
      if (!key.verify(CanonicalJson.writeBytes(payload),
          Base64.getDecoder().decode(peerProof.path("signature").asText("")))) {
        return Optional.empty();
      }
      return Optional.of(new Verified(token, sender, peerId, texts(content, "probeMultiaddrs"),
          texts(content, "browserBootstrapMultiaddrs"), content));
    } catch (final RecordRejectedException | IllegalArgumentException e) {
      // Malformed addresses, keys, PeerIds or base64 (all IllegalArgumentException): not ours.
      return Optional.empty();
    }
  }

  private static List<String> texts(final JsonNode content, final String field) {
    final List<String> out = new ArrayList<>();
    content.path(field).forEach(n -> out.add(n.asText()));
    return List.copyOf(out);
  }
}
