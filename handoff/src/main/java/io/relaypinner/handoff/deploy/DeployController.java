package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.SignedPayload;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.io.IOException;
import java.net.URI;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deployer (spec 3.2, 3.3, 7, 8): picks at most 5 compatible hosts, creates an instance on
 * one, hands the guest its deployment by push ({@link PushHandoff}) or pull ({@link PullHandoff}),
 * proves the relay ({@link RelayVerifier}) and waits for its registration
 * ({@link RegistrationWatcher}); a failed {@link Attempt} is cleaned up completely (instance
 * erased, the deployer's records for it removed and forgotten) before the next candidate is tried.
 *
 * <p>Trust (docs/handoff.md "Trust model"): an owner authorization is signed for a pull guest only
 * once a libp2p Noise handshake at the instance's allocated libp2p port proved the acknowledged
 * PeerId, never for whoever acknowledged first; from an HTTPS origin (no dial) none is published.
 * No private key crosses the setup endpoint or the aggregate unless
 * {@link DeployConfig#derivePublisherKey()} is set (push only, with a warning).
 *
 * <p>Blocking: run it on a thread of its own (it sleeps between polls).
 */
public final class DeployController {
  private static final Logger LOG = LoggerFactory.getLogger(DeployController.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final DeployContext context;
  private final HostProvider provider;
  private final DeployProgress progress;
  private final SecureRandom random;

  /**
   * @param handshake proves PeerIds at instance addresses (a {@link Libp2pPeerHandshake}; the
   *     caller closes it)
   */
  public DeployController(final HostProvider provider, final RecordStore store,
      final EthPrivateKey wallet, final DeployConfig config, final Clock clock,
      final DeployProgress progress, final SecureRandom random,
      final PeerHandshake handshake) {
    Objects.requireNonNull(wallet, "wallet");
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(clock, "clock");
    this.context = new DeployContext(Objects.requireNonNull(provider, "provider"),
        Objects.requireNonNull(store, "store"), wallet, new RecordSigner(wallet, clock), config,
        clock, Objects.requireNonNull(progress, "progress"), new GuestHttpClient(
            config.httpTimeout()), Objects.requireNonNull(handshake, "handshake"));
    this.provider = provider;
    this.progress = progress;
    this.random = Objects.requireNonNull(random, "random");
  }

  /** The owner address (the wallet's). */
  public EthAddress owner() {
    return context.owner();
  }

  /**
   * Deploys one relay.
   *
   * @param manifest the image
   * @param recordsUrl the record store the guest uses (the same store this controller writes to)
   * @param sshKey the SSH public key line to authorize on the instance
   * @return the successful result
   * @throws DeployFailedException when no relay was deployed (mixed content, no host, every
   *     attempt failed); its result lists the attempts
   * @throws IllegalArgumentException for a forced pull on an image without the guest-side fetch
   */
  public DeployResult deploy(final ImageManifest manifest, final URI recordsUrl,
      final String sshKey) throws InterruptedException {
    final String deploymentId = newDeploymentId();
    final List<String> warnings = new ArrayList<>();
    progress.event("validating", "image " + manifest.profile() + " " + manifest.version(), 2);
    final DeployConfig config = context.config();
    final HandoffMode handoff = config.handoff().orElse(manifest.handoff());
    if (handoff == HandoffMode.PULL && !manifest.supportsPull()) {
      throw new IllegalArgumentException("--handoff pull: image " + manifest.profile()
          + " does not declare supportsBootstrapConfigAggregate, so its guest would never fetch "
          + "the configuration and the deployer would wait in vain; use push or an image with "
          + "pull support");
    }
    if (handoff == HandoffMode.PUSH && config.httpsOrigin()) {
      final String message = "this image (" + manifest.profile() + " " + manifest.version()
          + ") is configured over plain HTTP (http://<host>:<port>/configure), which a page "
          + "served over HTTPS (" + config.origin().orElseThrow() + ") cannot call (mixed "
          + "content). Use an image with pull support (manifest: "
          + "supportsBootstrapConfigAggregate: true, e.g. the built-in orbitdb-relay), or serve "
          + "the deployer over plain HTTP locally (http://localhost). No host was created.";
      progress.event("error", message, 100);
      throw new DeployFailedException(DeployFailedException.MIXED_CONTENT, message,
          failed(handoff, deploymentId, manifest, List.of(), DeployFailedException.MIXED_CONTENT,
              message, warnings));
    }
    if (config.derivePublisherKey() && handoff == HandoffMode.PULL) {
      warnings.add("--derive-publisher-key ignored: a pull never carries a private key");
    }
    progress.event("selecting-host", "asking provider " + provider.name(), 5);
    final List<HostCandidate> hosts = provider.compatibleHosts(manifest).stream()
        .limit(config.maxCandidates()).toList();
    if (hosts.isEmpty()) {
      final String message = "provider " + provider.name() + " has no host compatible with "
          + manifest.profile() + " (it needs guest ports 9091 and 9092 forwarded)";
      progress.event("error", message, 100);
      throw new DeployFailedException(DeployFailedException.NO_COMPATIBLE_HOST, message,
          failed(handoff, deploymentId, manifest, List.of(),
              DeployFailedException.NO_COMPATIBLE_HOST, message, warnings));
    }
    final List<AttemptResult> attempts = new ArrayList<>();
    for (int i = 0; i < hosts.size(); i++) {
      final Attempt attempt = new Attempt(context, i + 1, hosts.get(i), deploymentId, manifest,
          handoff, recordsUrl, sshKey, warnings);
      try {
        final DeployResult.Relay relay = attempt.run();
        attempts.add(attempt.result(true, Optional.empty()));
        progress.event("completed", "relay " + relay.peerId() + " at " + relay.httpUrl(), 100);
        return new DeployResult(true, handoff, deploymentId, manifest.profile(), provider.name(),
            owner().toString(), attempts, Optional.of(relay), Optional.empty(), Optional.empty(),
            warnings);
      } catch (final AttemptFailed e) {
        LOG.info("attempt {} on {} failed at {}: {}", i + 1, hosts.get(i).id(), attempt.stage(),
            e.getMessage());
        progress.event("cleaning-up", "attempt " + (i + 1) + " on " + hosts.get(i).id()
            + " failed at " + attempt.stage() + ": " + e.getMessage(), 100);
        attempt.cleanUp();
        attempts.add(attempt.result(false, Optional.of(e.getMessage())));
      } catch (final InterruptedException | RuntimeException e) {
        // Our own failure or a cancel: still never leave the attempt's host or records behind.
        attempt.cleanUp();
        throw e;
      }
    }
    final StringBuilder message = new StringBuilder("all compatible hosts failed (")
        .append(attempts.size()).append(" tried):");
    for (final AttemptResult a : attempts) {
      message.append(' ').append(a.host()).append(": ").append(a.reason().orElse("?"))
          .append(" (while: ").append(a.stage()).append(") |");
    }
    message.setLength(message.length() - 2);
    progress.event("error", message.toString(), 100);
    throw new DeployFailedException(DeployFailedException.ALL_HOSTS_FAILED, message.toString(),
        failed(handoff, deploymentId, manifest, attempts, DeployFailedException.ALL_HOSTS_FAILED,
            message.toString(), warnings));
  }

  private DeployResult failed(final HandoffMode handoff, final String deploymentId,
      final ImageManifest manifest, final List<AttemptResult> attempts, final String code,
      final String message, final List<String> warnings) {
    return new DeployResult(false, handoff, deploymentId, manifest.profile(), provider.name(),
        owner().toString(), attempts, Optional.empty(), Optional.of(code), Optional.of(message),
        warnings);
  }

  private String newDeploymentId() {
    final byte[] bytes = new byte[5];
    random.nextBytes(bytes);
    return "d" + Long.toString(context.clock().millis() / 1000, 36)
        + HexFormat.of().formatHex(bytes);
  }

  /**
   * The owner authorization (notes/handoff.md 6.4): the wallet's EIP-191 signature over the RFC
   * 8785 canonical JSON of {@code {ownerAddress, publisherAddress, peerId, registrationId,
   * profile, version, instanceItemHash, issuedAt, expiresAt}} (times in ms), base64 of its
   * {@code {"scheme","payload","signature"}} JSON.
   */
  public static String signOwnerAuthorization(final EthPrivateKey owner,
      final EthAddress publisher, final String peerId, final String registrationId,
      final ImageManifest manifest, final String instanceItemHash, final Instant issuedAt,
      final Instant expiresAt) {
    final ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("ownerAddress", owner.address().toString());
    payload.put("publisherAddress", publisher.toString());
    payload.put("peerId", peerId);
    payload.put("registrationId", registrationId);
    payload.put("profile", manifest.profile());
    payload.put("version", manifest.version());
    payload.put("instanceItemHash", instanceItemHash);
    payload.put("issuedAt", issuedAt.toEpochMilli());
    payload.put("expiresAt", expiresAt.toEpochMilli());
    final ObjectNode json = SignedPayload.sign(owner, payload).toJson();
    try {
      return Base64.getEncoder().encodeToString(MAPPER.writeValueAsBytes(json));
    } catch (final IOException e) {
      throw new IllegalStateException("cannot serialize an authorization", e);
    }
  }
}
