package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.guest.Acknowledgement;
import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.RecordStoreException;
import io.relaypinner.handoff.records.SignedPayload;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import io.relaypinner.handoff.wallet.WalletFormatException;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.net.URI;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deployer (spec 3.2, 3.3, 7, 8): picks at most 5 compatible hosts, creates an instance on
 * one, hands the guest its deployment by push or pull, and verifies the result; a failed attempt
 * is cleaned up completely (instance erased, the deployer's records for it removed and forgotten)
 * before the next candidate is tried.
 *
 * <p>Push: {@code GET /health} on the setup endpoint is a hard gate (bounded tries with backoff);
 * {@code GET /metadata} gives the guest's real PeerId and publisher address; the owner
 * authorization binding both is signed and sent in the one {@code POST /configure}.
 *
 * <p>Pull: the configuration is published as the token's entry of the wallet's
 * {@code vm-bootstrap-config} aggregate; the acknowledgement must be a post signed by the
 * publisher key it names, with proofs binding this token, that PeerId (signed by the PeerId's own
 * key) and the publisher; only then is the owner authorization signed and delivered as a
 * follow-up entry the guest applies. No request goes from the deployer to the setup endpoint.
 *
 * <p>Both: the relay's own {@code GET /health} must answer with the PeerId (skipped for a pull
 * from an HTTPS origin, where a plain-HTTP probe would be mixed content), then the guest's
 * registration is awaited and verified here ({@link RegistrationCheck}). No private key crosses
 * the setup endpoint or the aggregate unless {@link DeployConfig#derivePublisherKey()} is set
 * (push only, with a warning).
 *
 * <p>Blocking: run it on a thread of its own (it sleeps between polls).
 */
public final class DeployController {
  private static final Logger LOG = LoggerFactory.getLogger(DeployController.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final int ACK_PAGES = 3;

  private final HostProvider provider;
  private final RecordStore store;
  private final EthPrivateKey wallet;
  private final DeployConfig config;
  private final Clock clock;
  private final DeployProgress progress;
  private final SecureRandom random;
  private final RecordSigner signer;
  private final GuestHttpClient http;

  public DeployController(final HostProvider provider, final RecordStore store,
      final EthPrivateKey wallet, final DeployConfig config, final Clock clock,
      final DeployProgress progress, final SecureRandom random) {
    this.provider = Objects.requireNonNull(provider, "provider");
    this.store = Objects.requireNonNull(store, "store");
    this.wallet = Objects.requireNonNull(wallet, "wallet");
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.progress = Objects.requireNonNull(progress, "progress");
    this.random = Objects.requireNonNull(random, "random");
    this.signer = new RecordSigner(wallet, clock);
    this.http = new GuestHttpClient(config.httpTimeout());
  }

  /** The owner address (the wallet's). */
  public EthAddress owner() {
    return wallet.address();
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
      final Attempt attempt = new Attempt(i + 1, hosts.get(i), deploymentId, manifest, handoff,
          recordsUrl, sshKey, warnings);
      try {
        final DeployResult.Relay relay = attempt.run();
        attempts.add(attempt.result(true, Optional.empty()));
        progress.event("completed", "relay " + relay.peerId() + " at " + relay.httpUrl(), 100);
        return new DeployResult(true, handoff, deploymentId, manifest.profile(), provider.name(),
            owner().toString(), attempts, Optional.of(relay), Optional.empty(), Optional.empty(),
            warnings);
      } catch (final AttemptFailed e) {
        LOG.info("attempt {} on {} failed at {}: {}", i + 1, hosts.get(i).id(), attempt.stage,
            e.getMessage());
        progress.event("cleaning-up", "attempt " + (i + 1) + " on " + hosts.get(i).id()
            + " failed at " + attempt.stage + ": " + e.getMessage(), 100);
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
    return "d" + Long.toString(clock.millis() / 1000, 36) + HexFormat.of().formatHex(bytes);
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

  /** A failed attempt; the message is the reason reported. */
  private static final class AttemptFailed extends Exception {
    private static final long serialVersionUID = 1L;

    AttemptFailed(final String message) {
      super(message);
    }
  }

  /** What the handoff learned about the guest. */
  private record Guest(String peerId, EthAddress publisher, List<String> multiaddrs) {}

  /** One candidate: its instance and everything published for it. */
  private final class Attempt {
    private final int number;
    private final HostCandidate host;
    private final String deploymentId;
    private final ImageManifest manifest;
    private final HandoffMode handoff;
    private final URI recordsUrl;
    private final String sshKey;
    private final List<String> warnings;
    private final List<String> published = new ArrayList<>();
    private final List<String> forgotten = new ArrayList<>();
    private final List<String> cleanupErrors = new ArrayList<>();
    private String stage = "creating-host";
    private HostInstance instance;
    private String token;
    private boolean erased;
    private boolean cleaned;

    Attempt(final int number, final HostCandidate host, final String deploymentId,
        final ImageManifest manifest, final HandoffMode handoff, final URI recordsUrl,
        final String sshKey, final List<String> warnings) {
      this.number = number;
      this.host = host;
      this.deploymentId = deploymentId;
      this.manifest = manifest;
      this.handoff = handoff;
      this.recordsUrl = recordsUrl;
      this.sshKey = sshKey;
      this.warnings = warnings;
    }

    private void stage(final String name, final String detail, final int percent) {
      stage = name;
      progress.event(name, "attempt " + number + " on " + host.id() + ": " + detail, percent);
    }

    DeployResult.Relay run() throws AttemptFailed, InterruptedException {
      final String keyLine;
      if (handoff == HandoffMode.PULL) {
        token = UUID.randomUUID().toString();
        keyLine = SshKeys.withLocator(sshKey, owner(), token);
      } else {
        keyLine = SshKeys.parsePublicKey(List.of(sshKey));
      }
      stage("creating-host", "creating an instance (" + handoff.wireName() + " handoff)", 10);
      try {
        instance = provider.create(new InstanceRequest(deploymentId, number, host, manifest,
            keyLine, recordsUrl.toString()));
      } catch (final HostException e) {
        throw new AttemptFailed("the host could not create the instance: " + e.getMessage());
      }
      final int tcp = requiredPort(ImageManifest.TCP_PORT, "libp2p TCP");
      final int ws = requiredPort(ImageManifest.WS_PORT, "libp2p WebSocket");
      final Optional<Integer> metrics = instance.hostPort(ImageManifest.METRICS_PORT);
      final String registrationId = "relay:" + manifest.profile() + ":"
          + config.instanceName() + ":" + instance.itemHash();
      final Guest guest = handoff == HandoffMode.PUSH
          ? push(tcp, ws, metrics, registrationId)
          : pull(registrationId);
      final String httpUrl = metrics.map(p -> "http://" + hostLiteral(instance.publicIpv4())
          + ":" + p).orElse(null);
      if (httpUrl == null) {
        throw new AttemptFailed("the instance has no mapped port for 9090 (relay HTTP)");
      }
      if (handoff == HandoffMode.PULL && config.httpsOrigin()) {
        warnings.add("relay HTTP not probed: a plain-HTTP request from an HTTPS origin is mixed "
            + "content; the PeerId is proven by the acknowledgement's peer proof");
      } else {
        verifyRelay(httpUrl, guest.peerId());
      }
      final Optional<PostRecord> registration = awaitRegistration(registrationId, guest);
      final Optional<String> trust = registration.flatMap(post -> RegistrationCheck.trustMode(
          post, registrationId, owner(), guest.publisher(), guest.peerId(), clock));
      if (trust.isEmpty()) {
        warnings.add("the guest's registration " + registrationId + " was not seen within "
            + config.registrationTimeout().toSeconds() + " s");
      } else if (!GuestRecords.DUAL_KEY_ATTESTED.equals(trust.get())) {
        warnings.add("the guest's registration is " + trust.get() + ", not "
            + GuestRecords.DUAL_KEY_ATTESTED);
      }
      if (handoff == HandoffMode.PULL && trust.filter(GuestRecords.DUAL_KEY_ATTESTED::equals)
          .isPresent()) {
        // The guest applied everything: the entry (public IPs, ports) is no longer needed.
        removeEntry("deployment " + deploymentId + " completed");
      }
      return new DeployResult.Relay(guest.peerId(), httpUrl, guest.multiaddrs(), instance.id(),
          guest.publisher().toString(), registrationId, trust,
          registration.map(PostRecord::itemHash));
    }

    /** Ends the attempt at once when the provider knows the instance is gone. */
    private void checkRunning() throws AttemptFailed {
      if (provider.running(instance.id()).filter(running -> !running).isPresent()) {
        throw new AttemptFailed("the instance " + instance.id() + " stopped (provider "
            + provider.name() + " reports it gone)");
      }
    }

    private int requiredPort(final int guestPort, final String what) throws AttemptFailed {
      return instance.hostPort(guestPort).orElseThrow(() -> new AttemptFailed("the instance has "
          + "no mapped host port for " + guestPort + " (" + what + "); the image must request "
          + "it (no fallback to 443)"));
    }

    private Guest push(final int tcp, final int ws, final Optional<Integer> metrics,
        final String registrationId) throws AttemptFailed, InterruptedException {
      final int setupPort = instance.hostPort(ImageManifest.SETUP_PORT).orElseThrow(
          () -> new AttemptFailed("the instance exposes no setup endpoint (guest port 80)"));
      final URI setup = URI.create("http://" + hostLiteral(instance.publicIpv4()) + ":"
          + setupPort);
      stage("waiting-for-setup-endpoint", "GET " + setup + "/health", 20);
      awaitSetupHealth(setup.resolve("/health"));
      stage("reading-metadata", "GET " + setup + "/metadata", 35);
      final JsonNode metadata;
      try {
        final GuestHttpClient.Response response = http.get(setup.resolve("/metadata"));
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
      final ObjectNode body = JsonNodeFactory.instance.objectNode();
      body.put("public_ipv4", instance.publicIpv4());
      instance.publicIpv6().ifPresent(v -> body.put("public_ipv6", v));
      body.put("tcp_port", tcp);
      body.put("ws_port", ws);
      metrics.ifPresent(p -> body.put("metrics_port", p));
      body.put("bootstrap_registration_id", registrationId);
      body.put("bootstrap_owner_address", owner().toString());
      if (config.derivePublisherKey()) {
        final EthPrivateKey derived =
            DeployWallet.derivePublisherKey(wallet, manifest.profile());
        warnings.add("--derive-publisher-key: the publisher private key was sent in plain HTTP "
            + "to " + setup + "; anyone on the path can publish as every " + manifest.profile()
            + " relay of this wallet");
        body.put("bootstrap_publisher_private_key", derived.toHex());
        publisher = derived.address();
      }
      stage("authorizing", "signing the owner authorization for peer " + peerId
          + " and publisher " + publisher, 45);
      final Instant now = clock.instant();
      body.put("bootstrap_owner_authorization_b64", signOwnerAuthorization(wallet, publisher,
          peerId, registrationId, manifest, instance.itemHash(), now,
          now.plus(config.authorizationValidity())));
      stage("configuring", "POST " + setup + "/configure", 55);
      final GuestHttpClient.Response response;
      try {
        response = http.postJson(setup.resolve("/configure"), body);
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
            + "authorized " + publisher + (config.derivePublisherKey() ? " (this image keeps "
            + "its own publisher key: drop --derive-publisher-key)" : ""));
      }
      final List<String> multiaddrs = new ArrayList<>();
      after.path("probe_multiaddrs").forEach(n -> multiaddrs.add(n.asText()));
      return new Guest(peerId, publisher, multiaddrs);
    }

    private void awaitSetupHealth(final URI health) throws AttemptFailed, InterruptedException {
      Duration delay = config.setupBackoff();
      final Duration maxDelay = config.setupBackoff().multipliedBy(8);
      String last = "no answer";
      for (int i = 1; i <= config.setupAttempts(); i++) {
        try {
          final GuestHttpClient.Response response = http.get(health);
          if (response.ok() && response.body().isObject()) {
            return;
          }
          last = "answered " + response.status();
        } catch (final IOException e) {
          last = e.getClass().getSimpleName() + (e.getMessage() == null ? ""
              : ": " + e.getMessage());
        }
        checkRunning();
        if (i < config.setupAttempts()) {
          Thread.sleep(delay.toMillis());
          delay = delay.multipliedBy(2).compareTo(maxDelay) > 0 ? maxDelay : delay.multipliedBy(2);
        }
      }
      throw new AttemptFailed("the setup endpoint " + health + " never became healthy ("
          + config.setupAttempts() + " tries; last: " + last + ")");
    }

    private Guest pull(final String registrationId) throws AttemptFailed, InterruptedException {
      stage("publishing-config", "publishing " + GuestRecords.CONFIG_AGGREGATE_KEY + " entry "
          + token, 20);
      final ObjectNode entry = entry(registrationId, null);
      publishEntry(entry);
      stage("waiting-for-acknowledgement", "waiting up to " + config.ackTimeout().toSeconds()
          + " s for the guest's " + GuestRecords.ACK_POST_TYPE + " post", 35);
      final Acknowledgement.Verified ack = awaitAcknowledgement();
      final EthAddress publisher = ack.publisher();
      stage("authorizing", "acknowledged by publisher " + publisher + " for peer "
          + ack.peerId() + "; delivering the owner authorization", 60);
      final Instant now = clock.instant();
      final String authorization = signOwnerAuthorization(wallet, publisher, ack.peerId(),
          registrationId, manifest, instance.itemHash(), now,
          now.plus(config.authorizationValidity()));
      publishEntry(entry(registrationId, authorization));
      return new Guest(ack.peerId(), publisher, ack.probeMultiaddrs());
    }

    private ObjectNode entry(final String registrationId, final String authorization) {
      final Instant now = clock.instant();
      final ObjectNode entry = JsonNodeFactory.instance.objectNode();
      entry.put("deploymentToken", token);
      entry.put("profile", manifest.profile());
      entry.put("ownerAddress", owner().toString());
      entry.put("instanceItemHash", instance.itemHash());
      entry.put("createdAt", now.toString());
      entry.put("expiresAt", now.plus(config.entryValidity()).toString());
      entry.put("status", "pending");
      final ObjectNode runtime = entry.putObject("runtime");
      runtime.put("publicIpv4", instance.publicIpv4());
      runtime.put("publicIpv6", instance.publicIpv6().orElse(null));
      runtime.putNull("proxyUrl");
      final ObjectNode ports = runtime.putObject("mappedPorts");
      instance.mappedPorts().forEach((guest, mapping) -> {
        final ObjectNode m = ports.putObject(Integer.toString(guest));
        m.put("host", mapping.host());
        m.put("tcp", mapping.tcp());
        m.put("udp", mapping.udp());
      });
      final ObjectNode bootstrap = entry.putObject("bootstrap");
      bootstrap.put("registrationId", registrationId);
      bootstrap.put("ownerAuthorizationBase64", authorization);
      return entry;
    }

    private void publishEntry(final ObjectNode entry) throws AttemptFailed {
      final ObjectNode entries = JsonNodeFactory.instance.objectNode();
      entries.set(token, entry);
      final AlephMessage message =
          signer.aggregate(GuestRecords.CONFIG_AGGREGATE_KEY, entries, config.channel());
      try {
        store.publish(message);
      } catch (final RecordRejectedException | RecordStoreException e) {
        throw new AttemptFailed("the record store refused the configuration entry: "
            + e.getMessage());
      }
      published.add(message.itemHash());
    }

    private Acknowledgement.Verified awaitAcknowledgement()
        throws AttemptFailed, InterruptedException {
      final Instant deadline = clock.instant().plus(config.ackTimeout());
      String lastError = null;
      while (true) {
        try {
          final List<Acknowledgement.Verified> acks = findAcknowledgements();
          if (acks.size() == 1) {
            return acks.get(0);
          }
          if (acks.size() > 1) {
            // The token is public (SSH key comment): anyone can post a self-consistent
            // acknowledgement with keys of their own. The guest is the one whose relay answers.
            final Optional<Acknowledgement.Verified> real = disambiguate(acks);
            if (real.isPresent()) {
              return real.get();
            }
            lastError = acks.size() + " conflicting acknowledgements (PeerIds "
                + acks.stream().map(Acknowledgement.Verified::peerId).toList() + ")";
          }
        } catch (final RecordRejectedException | RecordStoreException e) {
          lastError = e.getMessage();
        }
        checkRunning();
        if (!clock.instant().isBefore(deadline)) {
          throw new AttemptFailed("no verified acknowledgement of token " + token + " within "
              + config.ackTimeout().toSeconds() + " s" + (lastError == null ? ""
              : " (" + lastError + ")"));
        }
        Thread.sleep(config.pollInterval().toMillis());
      }
    }

    private Optional<Acknowledgement.Verified> disambiguate(
        final List<Acknowledgement.Verified> acks) throws InterruptedException {
      final Optional<Integer> metrics = instance.hostPort(ImageManifest.METRICS_PORT);
      if (config.httpsOrigin() || metrics.isEmpty()) {
        return Optional.empty();
      }
      try {
        final String seen = http.get(URI.create("http://" + hostLiteral(instance.publicIpv4())
            + ":" + metrics.get() + "/health")).body().path("peerId").asText("");
        return acks.stream().filter(ack -> ack.peerId().equals(seen)).findFirst();
      } catch (final IOException e) {
        return Optional.empty();
      }
    }

    /** Every distinct verified acknowledgement of this token, owner and instance. */
    private List<Acknowledgement.Verified> findAcknowledgements() {
      final List<Acknowledgement.Verified> found = new ArrayList<>();
      for (int page = 1; page <= ACK_PAGES; page++) {
        final List<PostRecord> posts = store.posts(PostQuery.builder()
            .types(GuestRecords.ACK_POST_TYPE).refs(GuestRecords.ACK_REF)
            .pagination(100).page(page).build()).posts();
        for (final PostRecord post : posts) {
          Acknowledgement.verify(post, token)
              .filter(ack -> owner().toString().equalsIgnoreCase(
                  ack.content().path("ownerAddress").asText(""))
                  && instance.itemHash().equals(ack.content().path("instanceItemHash").asText()))
              .filter(ack -> found.stream().noneMatch(f -> f.peerId().equals(ack.peerId())
                  && f.publisher().equals(ack.publisher())))
              .ifPresent(found::add);
        }
        if (posts.size() < 100) {
          break;
        }
      }
      return found;
    }

    private void verifyRelay(final String httpUrl, final String peerId)
        throws AttemptFailed, InterruptedException {
      stage("verifying-relay", "GET " + httpUrl + "/health until it names " + peerId, 75);
      final Instant deadline = clock.instant().plus(config.relayTimeout());
      final URI health = URI.create(httpUrl + "/health");
      String last = "no answer";
      while (true) {
        try {
          final GuestHttpClient.Response response = http.get(health);
          final String seen = response.body().path("peerId").asText("");
          if (response.status() == 200 && peerId.equals(seen)) {
            return;
          }
          last = "answered " + response.status() + (seen.isEmpty() ? "" : " as " + seen);
        } catch (final IOException e) {
          last = e.getClass().getSimpleName() + (e.getMessage() == null ? ""
              : ": " + e.getMessage());
        }
        checkRunning();
        if (!clock.instant().isBefore(deadline)) {
          throw new AttemptFailed("the relay never answered " + health + " with PeerId " + peerId
              + " within " + config.relayTimeout().toSeconds() + " s (last: " + last + ")");
        }
        Thread.sleep(config.pollInterval().toMillis());
      }
    }

    private Optional<PostRecord> awaitRegistration(final String registrationId,
        final Guest guest) throws InterruptedException {
      stage("waiting-for-registration", "waiting for registration " + registrationId, 88);
      final Instant deadline = clock.instant().plus(config.registrationTimeout());
      PostRecord best = null;
      while (true) {
        try {
          for (final PostRecord post : store.posts(PostQuery.builder()
              .types(GuestRecords.REGISTRATION_POST_TYPE).refs(GuestRecords.REGISTRATION_REF)
              .addresses(guest.publisher().toString()).pagination(50).build()).posts()) {
            final Optional<String> trust = RegistrationCheck.trustMode(post, registrationId,
                owner(), guest.publisher(), guest.peerId(), clock);
            if (trust.filter(GuestRecords.DUAL_KEY_ATTESTED::equals).isPresent()) {
              return Optional.of(post);
            }
            if (trust.isPresent() && best == null) {
              best = post;
            }
          }
        } catch (final RecordRejectedException | RecordStoreException e) {
          LOG.debug("registration lookup: {}", e.getMessage());
        }
        if (!clock.instant().isBefore(deadline)) {
          return Optional.ofNullable(best);
        }
        Thread.sleep(config.pollInterval().toMillis());
      }
    }

    /** Removes this attempt's aggregate entry and forgets every message published for it. */
    private void removeEntry(final String reason) {
      if (token == null || published.isEmpty()) {
        return;
      }
      try {
        final AlephMessage delete = signer.deleteAggregateEntries(
            GuestRecords.CONFIG_AGGREGATE_KEY, List.of(token), config.channel());
        store.publish(delete);
        published.add(delete.itemHash());
        store.publish(signer.forget(published, List.of(), reason, config.channel()));
        forgotten.addAll(published);
        published.clear();
        if (store.aggregateEntry(owner(), GuestRecords.CONFIG_AGGREGATE_KEY, token)
            .isPresent()) {
          cleanupErrors.add("the aggregate entry " + token + " is still visible");
        }
      } catch (final RecordRejectedException | RecordStoreException e) {
        cleanupErrors.add("records: " + e.getMessage());
      }
    }

    void cleanUp() {
      if (cleaned) {
        return;
      }
      cleaned = true;
      if (instance != null) {
        try {
          provider.erase(instance.id());
          erased = true;
        } catch (final HostException e) {
          cleanupErrors.add("erase " + instance.id() + ": " + e.getMessage());
        } catch (final RuntimeException e) {
          cleanupErrors.add("erase " + instance.id() + ": " + e);
        }
      }
      removeEntry("failed deployment attempt " + number + " of " + deploymentId + " on "
          + host.id());
    }

    AttemptResult result(final boolean ok, final Optional<String> reason) {
      return new AttemptResult(number, host.id(),
          Optional.ofNullable(instance).map(HostInstance::id), ok, ok ? "completed" : stage,
          reason, erased, forgotten, cleanupErrors);
    }
  }

  private static String peerIdOf(final String text, final String field) throws AttemptFailed {
    try {
      return PeerId.parse(text).toBase58();
    } catch (final IllegalArgumentException e) {
      throw new AttemptFailed(field + " is not a PeerId: \"" + GuestHttpClient.clip(text) + "\"");
    }
  }

  private static EthAddress addressOf(final String text, final String field)
      throws AttemptFailed {
    try {
      return EthAddress.parse(text);
    } catch (final WalletFormatException e) {
      throw new AttemptFailed(field + " is not an address: \"" + GuestHttpClient.clip(text)
          + "\"");
    }
  }

  private static String hostLiteral(final String ip) {
    return ip.indexOf(':') >= 0 ? "[" + ip + "]" : ip.toLowerCase(Locale.ROOT);
  }
}
