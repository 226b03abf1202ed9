package io.relaypinner.cli;

import io.relaypinner.handoff.deploy.DeployConfig;
import io.relaypinner.handoff.deploy.DeployWallet;
import io.relaypinner.handoff.deploy.HandoffMode;
import io.relaypinner.handoff.deploy.ImageManifest;
import io.relaypinner.handoff.deploy.LocalHostProvider;
import io.relaypinner.handoff.deploy.SshKeys;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * Every option of {@code deploy} that shapes one deployment, in one place: declared once, checked
 * once and turned into what the controller takes ({@link #manifest()}, {@link #config()},
 * {@link #sshKey()}, {@link #localProvider}). A bad value is an {@link IllegalArgumentException}
 * naming the option, which the command reports as bad usage (exit 2).
 */
final class DeployOptions {
  @Option(names = "--handoff", paramLabel = "pull|push",
      description = "Force the handoff. Default: the manifest decides (pull when it declares "
          + "supportsBootstrapConfigAggregate or the profile is uc-go-peer). 'pull' is refused "
          + "for an image without the guest-side fetch.")
  HandoffMode handoff;

  @Option(names = "--provider", paramLabel = "NAME", defaultValue = "local",
      description = "Host provider (default ${DEFAULT-VALUE}; only 'local' exists: guests are "
          + "processes on this machine).")
  String provider;

  @Option(names = "--origin", paramLabel = "URL",
      description = "The origin of the page this deployer runs in, e.g. https://app.example. "
          + "With an https origin a push is impossible (the browser blocks plain-HTTP requests "
          + "to the guest as mixed content): a push-only image then fails at once, before any "
          + "host is created, and a pull proves no PeerId (such a page cannot dial), so it "
          + "publishes no owner authorization: the guest registers wallet-signed.")
  URI origin;

  @Option(names = "--manifest", paramLabel = "FILE",
      description = "Image manifest (JSON: profile, version, supportsBootstrapConfigAggregate, "
          + "requiredPortForwards). Default: the built-in one (orbitdb-relay, pull).")
  Path manifestFile;

  @Option(names = "--profile", paramLabel = "PROFILE",
      description = "Instead of --manifest: the manifest generated for a <db>-relay profile "
          + "(declares supportsBootstrapConfigAggregate, so pull).")
  String profile;

  @Option(names = "--records", paramLabel = "URL",
      description = "Record store (an Aleph API host, or 'relay-pinner records serve') for the "
          + "configuration entry, the acknowledgement and the registration; guests use it too. "
          + "Default: a record service embedded in this process on 127.0.0.1 and an ephemeral "
          + "port. It stops when deploy exits, so guests' later registration refreshes fail "
          + "until a service answers there again: give a long-running one for durable "
          + "registrations.")
  URI records;

  @Option(names = "--wallet-key-file", paramLabel = "FILE",
      description = "Deploy wallet key (0x + 64 hex). Default: $" + DeployWallet.ENV
          + ", else DIR/wallet.key (generated with mode 0600 when missing). The wallet owns "
          + "the deployment: it signs the configuration entries and the owner authorization.")
  Path walletKeyFile;

  @Option(names = "--ssh-key", paramLabel = "FILE",
      description = "SSH public key (.pub) to authorize on the instance. Default: a throwaway "
          + "Ed25519 key whose private half is discarded (no SSH access).")
  Path sshKeyFile;

  @Option(names = "--name", paramLabel = "NAME", defaultValue = "relay-pinner",
      description = "Instance name in the registration id relay:<profile>:<name>:<instance "
          + "hash> (default ${DEFAULT-VALUE}).")
  String name;

  @Option(names = "--max-candidates", paramLabel = "N", defaultValue = "5",
      description = "Hosts tried at most, 1-5 (default ${DEFAULT-VALUE}).")
  int maxCandidates;

  @Option(names = "--ack-timeout", paramLabel = "MS", defaultValue = "120000",
      description = "Pull: wait for the guest's acknowledgement (default ${DEFAULT-VALUE} ms).")
  long ackTimeoutMs;

  @Option(names = "--setup-attempts", paramLabel = "N", defaultValue = "45",
      description = "Push: GET /health tries on the setup endpoint, with doubling backoff from "
          + "--setup-backoff up to 8 times it (default ${DEFAULT-VALUE}).")
  int setupAttempts;

  @Option(names = "--setup-backoff", paramLabel = "MS", defaultValue = "500",
      description = "Push: first delay between setup health tries (default ${DEFAULT-VALUE} ms).")
  long setupBackoffMs;

  @Option(names = "--relay-timeout", paramLabel = "MS", defaultValue = "60000",
      description = "Wait for the relay to prove the guest's PeerId (libp2p handshake at the "
          + "instance's libp2p port) and for its GET /health to answer with it (default "
          + "${DEFAULT-VALUE} ms).")
  long relayTimeoutMs;

  @Option(names = "--registration-timeout", paramLabel = "MS", defaultValue = "60000",
      description = "Wait for the guest's bootstrap registration; reported, not fatal (default "
          + "${DEFAULT-VALUE} ms).")
  long registrationTimeoutMs;

  @Option(names = "--authorization-validity", paramLabel = "MS", defaultValue = "7776000000",
      description = "Validity of the owner authorization (default ${DEFAULT-VALUE} ms = 90 "
          + "days); after it the guest registers wallet-signed until re-authorized.")
  long authorizationValidityMs;

  @Option(names = "--derive-publisher-key",
      description = "Push only, discouraged: derive the guest's publisher key from the wallet "
          + "(HMAC-SHA256 over 'le-space/bootstrap-publisher/v1:<profile>') and send it in "
          + "POST /configure, for a publisher address that stays the same across redeployments. "
          + "It sends a secret over plain HTTP, and the key is the same for every relay of this "
          + "wallet and profile. A guest that already has a publisher key in use keeps it "
          + "(spec 2.9) and the attempt fails.")
  boolean derivePublisherKey;

  @Option(names = "--bind", paramLabel = "ADDR", defaultValue = "127.0.0.1",
      description = "Local provider: the address guests listen on (default ${DEFAULT-VALUE}).")
  String bindHost;

  @Option(names = "--public-ip", paramLabel = "IPV4", defaultValue = "127.0.0.1",
      description = "Local provider: the IPv4 address guests announce and the deployer uses "
          + "(default ${DEFAULT-VALUE}).")
  String publicIp;

  /** The image: {@code --manifest}, {@code --profile} or the built-in one. */
  ImageManifest manifest() {
    if (manifestFile != null && profile != null) {
      throw new IllegalArgumentException("--manifest and --profile exclude each other");
    }
    try {
      return manifestFile != null ? ImageManifest.load(manifestFile)
          : profile != null ? ImageManifest.forRelayProfile(profile) : ImageManifest.BUILT_IN;
    } catch (final IllegalArgumentException | IOException e) {
      throw new IllegalArgumentException((manifestFile != null ? "--manifest: " : "--profile: ")
          + e.getMessage(), e);
    }
  }

  /** The controller's settings. */
  DeployConfig config() {
    return config(handoff, origin);
  }

  /** The controller's settings with another handoff ({@code null}: the manifest's) and origin. */
  DeployConfig config(final HandoffMode handoff, final URI origin) {
    if (!"local".equals(provider)) {
      throw new IllegalArgumentException("--provider: unknown provider \"" + provider
          + "\" (only 'local')");
    }
    return DeployConfig.builder().handoff(handoff).origin(origin)
        .maxCandidates(maxCandidates).instanceName(name).setupAttempts(setupAttempts)
        .setupBackoff(millis(setupBackoffMs, "--setup-backoff"))
        .ackTimeout(millis(ackTimeoutMs, "--ack-timeout"))
        .relayTimeout(millis(relayTimeoutMs, "--relay-timeout"))
        .registrationTimeout(millis(registrationTimeoutMs, "--registration-timeout"))
        .authorizationValidity(millis(authorizationValidityMs, "--authorization-validity"))
        .derivePublisherKey(derivePublisherKey).build();
  }

  /** The SSH key line: {@code --ssh-key}, or a throwaway key. */
  String sshKey() {
    try {
      return sshKeyFile == null ? SshKeys.throwawayKey()
          : SshKeys.parsePublicKey(Files.readAllLines(sshKeyFile, StandardCharsets.UTF_8));
    } catch (final IllegalArgumentException | IOException e) {
      throw new IllegalArgumentException("--ssh-key " + sshKeyFile + ": " + e.getMessage(), e);
    }
  }

  /** {@code --wallet-key-file}, or null. */
  Path walletKeyFile() {
    return walletKeyFile;
  }

  /** {@code --records}, or null for the embedded record service. */
  URI records() {
    return records;
  }

  /** The local provider guests run under {@code deploymentsDir} with. */
  LocalHostProvider localProvider(final Path deploymentsDir) {
    return new LocalHostProvider(new LocalHostProvider.Settings(deploymentsDir, bindHost,
        publicIp, LocalHostProvider.Settings.defaults(deploymentsDir).guestCommand(), 5,
        Duration.ofSeconds(1), Duration.ofSeconds(20)), Clock.systemUTC());
  }

  private static Duration millis(final long ms, final String option) {
    if (ms < 1) {
      throw new IllegalArgumentException(option + " must be a positive number of ms");
    }
    return Duration.ofMillis(ms);
  }
}
