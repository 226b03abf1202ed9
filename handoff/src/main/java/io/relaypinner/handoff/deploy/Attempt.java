package io.relaypinner.handoff.deploy;

import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.records.PostRecord;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * One candidate host of a deployment: creates the instance, runs the {@link Handoff}, has the
 * {@link RelayVerifier} prove the relay, waits for the guest's registration
 * ({@link RegistrationWatcher}) and, when any step fails, {@link #cleanUp() cleans up}: the
 * instance erased, the handoff's records removed and forgotten.
 */
final class Attempt {
  private final DeployContext context;
  private final int number;
  private final HostCandidate host;
  private final String deploymentId;
  private final ImageManifest manifest;
  private final HandoffMode mode;
  private final URI recordsUrl;
  private final String sshKey;
  private final List<String> warnings;
  private final Handoff handoff;
  private final List<String> eraseErrors = new ArrayList<>();
  private String stage = "creating-host";
  private HostInstance instance;
  private String registrationId;
  private boolean erased;
  private boolean cleaned;

  Attempt(final DeployContext context, final int number, final HostCandidate host,
      final String deploymentId, final ImageManifest manifest, final HandoffMode mode,
      final URI recordsUrl, final String sshKey, final List<String> warnings) {
    this.context = context;
    this.number = number;
    this.host = host;
    this.deploymentId = deploymentId;
    this.manifest = manifest;
    this.mode = mode;
    this.recordsUrl = recordsUrl;
    this.sshKey = sshKey;
    this.warnings = warnings;
    this.handoff = mode == HandoffMode.PULL ? new PullHandoff(context) : new PushHandoff(context);
  }

  DeployResult.Relay run() throws AttemptFailed, InterruptedException {
    final String keyLine = handoff.authorizedKey(sshKey);
    stage("creating-host", "creating an instance (" + mode.wireName() + " handoff)", 10);
    try {
      instance = context.provider().create(new InstanceRequest(deploymentId, number, host,
          manifest, keyLine, recordsUrl.toString()));
    } catch (final HostException e) {
      throw new AttemptFailed("the host could not create the instance: " + e.getMessage());
    }
    requiredPort(ImageManifest.TCP_PORT, "libp2p TCP");
    requiredPort(ImageManifest.WS_PORT, "libp2p WebSocket");
    final int metrics = requiredPort(ImageManifest.METRICS_PORT, "relay HTTP");
    registrationId = "relay:" + manifest.profile() + ":" + context.config().instanceName() + ":"
        + instance.itemHash();
    final HandoffGuest guest = handoff.handOff(this);
    final String httpUrl = "http://" + hostLiteral(instance.publicIpv4()) + ":" + metrics;
    new RelayVerifier(context, this).verify(guest, httpUrl);
    final Optional<PostRecord> registration =
        new RegistrationWatcher(context, this).await(registrationId, guest);
    final Optional<String> trust = registration.flatMap(post -> RegistrationCheck.trustMode(
        post, registrationId, context.owner(), guest.publisher(), guest.peerId(),
        context.clock()));
    final String expected = guest.authorized() ? GuestRecords.DUAL_KEY_ATTESTED
        : GuestRecords.WALLET_SIGNED;
    if (trust.isEmpty()) {
      warnings.add("the guest's registration " + registrationId + " was not seen within "
          + context.config().registrationTimeout().toSeconds() + " s");
    } else if (!expected.equals(trust.get())) {
      warnings.add("the guest's registration is " + trust.get() + ", not " + expected);
    }
    if (trust.filter(expected::equals).isPresent()) {
      // The guest applied everything: the entry (public IPs, ports) is no longer needed.
      handoff.completed("deployment " + deploymentId + " completed");
    }
    return new DeployResult.Relay(guest.peerId(), httpUrl, guest.multiaddrs(), instance.id(),
        guest.publisher().toString(), registrationId, trust,
        registration.map(PostRecord::itemHash));
  }

  int number() {
    return number;
  }

  HostCandidate host() {
    return host;
  }

  String stage() {
    return stage;
  }

  HostInstance instance() {
    return instance;
  }

  ImageManifest manifest() {
    return manifest;
  }

  String deploymentId() {
    return deploymentId;
  }

  String registrationId() {
    return registrationId;
  }

  /** Adds a warning to the deployment's result. */
  void warn(final String warning) {
    warnings.add(warning);
  }

  /** Enters a stage and reports it. */
  void stage(final String name, final String detail, final int percent) {
    stage = name;
    context.progress().event(name, "attempt " + number + " on " + host.id() + ": " + detail,
        percent);
  }

  /** Ends the attempt at once when the provider knows the instance is gone. */
  void checkRunning() throws AttemptFailed {
    if (context.provider().running(instance.id()).filter(running -> !running).isPresent()) {
      throw new AttemptFailed("the instance " + instance.id() + " stopped (provider "
          + context.provider().name() + " reports it gone)");
    }
  }

  /** The host port of a guest port the image needs (no fallback to 443). */
  int requiredPort(final int guestPort, final String what) throws AttemptFailed {
    return instance.hostPort(guestPort).orElseThrow(() -> new AttemptFailed("the instance has "
        + "no mapped host port for " + guestPort + " (" + what + "); the image must request "
        + "it (no fallback to 443)"));
  }

  /** Erases the instance and removes the handoff's records; runs once. */
  void cleanUp() {
    if (cleaned) {
      return;
    }
    cleaned = true;
    if (instance != null) {
      try {
        context.provider().erase(instance.id());
        erased = true;
      } catch (final HostException e) {
        eraseErrors.add("erase " + instance.id() + ": " + e.getMessage());
      } catch (final RuntimeException e) {
        eraseErrors.add("erase " + instance.id() + ": " + e);
      }
    }
    handoff.cleanUp("failed deployment attempt " + number + " of " + deploymentId + " on "
        + host.id());
  }

  AttemptResult result(final boolean ok, final Optional<String> reason) {
    final List<String> errors = new ArrayList<>(eraseErrors);
    errors.addAll(handoff.cleanupErrors());
    return new AttemptResult(number, host.id(),
        Optional.ofNullable(instance).map(HostInstance::id), ok, ok ? "completed" : stage,
        reason, erased, handoff.forgotten(), errors);
  }

  /** An IP as the host part of a URL. */
  static String hostLiteral(final String ip) {
    return ip.indexOf(':') >= 0 ? "[" + ip + "]" : ip.toLowerCase(Locale.ROOT);
  }
}
