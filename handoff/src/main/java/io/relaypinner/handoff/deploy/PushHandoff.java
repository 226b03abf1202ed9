package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.common.Backoff;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import io.relaypinner.handoff.wallet.WalletFormatException;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The push handoff (spec 3.2): {@code GET /health} on the setup endpoint is a hard gate (bounded
 * tries with backoff); {@code GET /metadata} gives the guest's PeerId and publisher address; the
 * owner authorization binding both is signed and sent in the one {@code POST /configure}.
 *
 * <p>Trust: the relay is not running before {@code /configure}, so no handshake can prove its
 * PeerId before the authorization must be sent (the setup endpoint closes after it; there is no
 * second call). The authorization rests on the provider's allocation: the metadata was read from
 * the setup port the provider mapped for this instance. The {@link RelayVerifier} then proves the
 * PeerId by a Noise handshake at the instance's libp2p port and fails the attempt otherwise.
 */
final class PushHandoff implements Handoff {
  private final DeployContext context;

  PushHandoff(final DeployContext context) {
    this.context = context;
  }

  @Override
  public String authorizedKey(final String sshKey) {
    return SshKeys.parsePublicKey(List.of(sshKey));
  }

  @Override
  public HandoffGuest handOff(final Attempt attempt) throws AttemptFailed, InterruptedException {
    final HostInstance instance = attempt.instance();
    final int setupPort = instance.hostPort(ImageManifest.SETUP_PORT).orElseThrow(
        () -> new AttemptFailed("the instance exposes no setup endpoint (guest port 80)"));
    final URI setup = URI.create("http://" + Attempt.hostLiteral(instance.publicIpv4()) + ":"
        + setupPort);
    attempt.stage("waiting-for-setup-endpoint", "GET " + setup + "/health", 20);
    awaitSetupHealth(attempt, setup.resolve("/health"));
    attempt.stage("reading-metadata", "GET " + setup + "/metadata", 35);
    final JsonNode metadata;
    try {
      final GuestHttpClient.Response response = context.http().get(setup.resolve("/metadata"));
      if (!response.ok()) {
        throw new AttemptFailed("GET /metadata answered " + response.status());
      }
      metadata = response.body().path("metadata");
    } catch (final IOException e) {
      throw new AttemptFailed("GET /metadata failed: " + e.getMessage());
    }
    final String peerId = peerIdOf(metadata.path("peer_id").asText(""), "metadata.peer_id");
    EthAddress publisher = addressOf(metadata.path("bootstrap_publisher_address").asText(""),
        "metadata.bootstrap_publisher_address");
    final ObjectNode body = configureBody(attempt);
    if (context.config().derivePublisherKey()) {
      final EthPrivateKey derived =
          DeployWallet.derivePublisherKey(context.wallet(), attempt.manifest().profile());
      attempt.warn("--derive-publisher-key: the publisher private key was sent in plain HTTP "
          + "to " + setup + "; anyone on the path can publish as every "
          + attempt.manifest().profile() + " relay of this wallet");
      body.put("bootstrap_publisher_private_key", derived.toHex());
      publisher = derived.address();
    }
    attempt.stage("authorizing", "signing the owner authorization for peer " + peerId
        + " and publisher " + publisher, 45);
    final Instant now = context.clock().instant();
    body.put("bootstrap_owner_authorization_b64", DeployController.signOwnerAuthorization(
        context.wallet(), publisher, peerId, attempt.registrationId(), attempt.manifest(),
        instance.itemHash(), now, now.plus(context.config().authorizationValidity())));
    attempt.stage("configuring", "POST " + setup + "/configure", 55);
    final GuestHttpClient.Response response;
    try {
      response = context.http().postJson(setup.resolve("/configure"), body);
    } catch (final IOException e) {
      throw new AttemptFailed("POST /configure failed (the guest died or closed the "
          + "connection during configuration): " + e.getMessage());
    }
    if (!response.ok() || !"configured".equals(response.body().path("status").asText())) {
      throw new AttemptFailed("POST /configure answered " + response.status() + ": "
          + GuestHttpClient.clip(response.body().toString()));
    }
    final JsonNode after = response.body().path("metadata");
    if (after.isObject() && !peerId.equals(after.path("peer_id").asText(peerId))) {
      throw new AttemptFailed("the guest's PeerId changed during configuration");
    }
    final String reportedPublisher = after.path("bootstrap_publisher_address").asText("");
    if (!reportedPublisher.isEmpty() && !publisher.equals(addressOf(reportedPublisher,
        "bootstrap_publisher_address after /configure"))) {
      throw new AttemptFailed("the guest publishes as " + reportedPublisher + ", not as the "
          + "authorized " + publisher + (context.config().derivePublisherKey() ? " (this "
          + "guest keeps the publisher key it already had: drop --derive-publisher-key)" : ""));
    }
    final List<String> multiaddrs = new ArrayList<>();
    after.path("probe_multiaddrs").forEach(n -> multiaddrs.add(n.asText()));
    return new HandoffGuest(peerId, publisher, multiaddrs, false, true);
  }

  /** The public deployment facts of {@code /configure} (spec 2.9: no secret). */
  private ObjectNode configureBody(final Attempt attempt) throws AttemptFailed {
    final HostInstance instance = attempt.instance();
    final ObjectNode body = JsonNodeFactory.instance.objectNode();
    body.put("public_ipv4", instance.publicIpv4());
    instance.publicIpv6().ifPresent(v -> body.put("public_ipv6", v));
    body.put("tcp_port", attempt.requiredPort(ImageManifest.TCP_PORT, "libp2p TCP"));
    body.put("ws_port", attempt.requiredPort(ImageManifest.WS_PORT, "libp2p WebSocket"));
    body.put("metrics_port", attempt.requiredPort(ImageManifest.METRICS_PORT, "relay HTTP"));
    body.put("bootstrap_registration_id", attempt.registrationId());
    body.put("bootstrap_owner_address", context.owner().toString());
    return body;
  }

  private void awaitSetupHealth(final Attempt attempt, final URI health)
      throws AttemptFailed, InterruptedException {
    final DeployConfig config = context.config();
    final Backoff backoff =
        Backoff.of(config.setupBackoff(), config.setupBackoff().multipliedBy(8));
    String last = "no answer";
    for (int i = 1; i <= config.setupAttempts(); i++) {
      try {
        final GuestHttpClient.Response response = context.http().get(health);
        if (response.ok() && response.body().isObject()) {
          return;
        }
        last = "answered " + response.status();
      } catch (final IOException e) {
        last = e.getClass().getSimpleName() + (e.getMessage() == null ? ""
            : ": " + e.getMessage());
      }
      attempt.checkRunning();
      if (i < config.setupAttempts()) {
        Thread.sleep(backoff.delay(i).toMillis());
      }
    }
    throw new AttemptFailed("the setup endpoint " + health + " never became healthy ("
        + config.setupAttempts() + " tries; last: " + last + ")");
  }

  @Override
  public void completed(final String reason) {
    // Nothing was published.
  }

  @Override
  public void cleanUp(final String reason) {
    // Nothing was published.
  }

  @Override
  public List<String> forgotten() {
    return List.of();
  }

  @Override
  public List<String> cleanupErrors() {
    return List.of();
  }

  static String peerIdOf(final String text, final String field) throws AttemptFailed {
    try {
      return PeerId.parse(text).toBase58();
    } catch (final IllegalArgumentException e) {
      throw new AttemptFailed(field + " is not a PeerId: \"" + GuestHttpClient.clip(text) + "\"");
    }
  }

  static EthAddress addressOf(final String text, final String field) throws AttemptFailed {
    try {
      return EthAddress.parse(text);
    } catch (final WalletFormatException e) {
      throw new AttemptFailed(field + " is not an address: \"" + GuestHttpClient.clip(text)
          + "\"");
    }
  }
}
