package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The outcome of one deployment, as the final JSON line of {@code deploy} prints it
 * (CONTRACT.md): {@code ok}, {@code handoff}, {@code deploymentId}, {@code attempts}, and for a
 * success {@code relay: {peerId, httpUrl, multiaddrs}} plus the instance, the owner, the guest's
 * publisher address, the registration id and its trust mode; for a failure {@code code} and
 * {@code error}.
 */
public record DeployResult(boolean ok, HandoffMode handoff, String deploymentId, String profile,
    String provider, String owner, List<AttemptResult> attempts, Optional<Relay> relay,
    Optional<String> code, Optional<String> error, List<String> warnings) {
  public DeployResult {
    Objects.requireNonNull(handoff, "handoff");
    attempts = List.copyOf(attempts);
    warnings = List.copyOf(warnings);
  }

  /**
   * The deployed relay.
   *
   * @param peerId the relay's PeerId (proven by the guest: metadata over push, the
   *     acknowledgement's peer proof over pull)
   * @param httpUrl the relay's HTTP base URL as reachable from this machine
   * @param multiaddrs its dialable addresses
   * @param instanceId the provider's instance id ({@code deploy erase} takes it)
   * @param publisherAddress the guest's bootstrap publisher address
   * @param registrationId the bootstrap registration id
   * @param trustMode the trust mode of the guest's registration as verified here
   *     ({@code dual-key-attested}, {@code wallet-signed}), empty when none was seen in time
   * @param registrationHash the item hash of that registration
   */
  public record Relay(String peerId, String httpUrl, List<String> multiaddrs, String instanceId,
      String publisherAddress, String registrationId, Optional<String> trustMode,
      Optional<String> registrationHash) {
    public Relay {
      multiaddrs = List.copyOf(multiaddrs);
    }
  }

  /** The JSON object of the contract. */
  public ObjectNode toJson() {
    final ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("ok", ok);
    node.put("handoff", handoff.wireName());
    node.put("deploymentId", deploymentId);
    node.put("profile", profile);
    node.put("provider", provider);
    node.put("owner", owner);
    code.ifPresent(c -> node.put("code", c));
    error.ifPresent(e -> node.put("error", e));
    final ArrayNode list = node.putArray("attempts");
    attempts.forEach(a -> list.add(a.toJson()));
    if (relay.isPresent()) {
      final Relay r = relay.get();
      final ObjectNode relayNode = node.putObject("relay");
      relayNode.put("peerId", r.peerId());
      relayNode.put("httpUrl", r.httpUrl());
      r.multiaddrs().forEach(relayNode.putArray("multiaddrs")::add);
      node.put("instanceId", r.instanceId());
      node.put("publisherAddress", r.publisherAddress());
      final ObjectNode registration = node.putObject("registration");
      registration.put("id", r.registrationId());
      registration.put("trustMode", r.trustMode().orElse(null));
      registration.put("itemHash", r.registrationHash().orElse(null));
    } else {
      node.putNull("relay");
    }
    warnings.forEach(node.putArray("warnings")::add);
    return node;
  }
}
