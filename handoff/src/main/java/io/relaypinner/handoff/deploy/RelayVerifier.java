package io.relaypinner.handoff.deploy;

import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.net.URI;
import java.time.Instant;

/**
 * Checks the relay a handoff produced, until {@link DeployConfig#relayTimeout()}: a libp2p Noise
 * handshake at the libp2p TCP port the provider allocated for the instance must prove the guest's
 * PeerId (unless the pull already proved it there), and the relay's {@code GET /health} must
 * answer 200 with it. From an HTTPS origin neither is possible (no dial; plain HTTP is mixed
 * content): a warning says so.
 */
final class RelayVerifier {
  private final DeployContext context;
  private final Attempt attempt;

  RelayVerifier(final DeployContext context, final Attempt attempt) {
    this.context = context;
    this.attempt = attempt;
  }

  void verify(final HandoffGuest guest, final String httpUrl)
      throws AttemptFailed, InterruptedException {
    if (!context.config().canDial()) {
      attempt.warn("relay not probed: a page served over HTTPS can neither dial the relay nor "
          + "call its plain-HTTP API (mixed content)");
      return;
    }
    final HostInstance instance = attempt.instance();
    final int tcp = attempt.requiredPort(ImageManifest.TCP_PORT, "libp2p TCP");
    final String libp2p = Attempt.hostLiteral(instance.publicIpv4()) + ":" + tcp;
    final URI health = URI.create(httpUrl + "/health");
    attempt.stage("verifying-relay", "libp2p handshake with " + libp2p + " and GET " + health
        + " until both name " + guest.peerId(), 75);
    final Instant deadline = context.clock().instant().plus(context.config().relayTimeout());
    boolean proven = guest.proven();
    String last = "no answer";
    while (true) {
      if (!proven) {
        try {
          final PeerId seen = context.handshake().prove(instance.publicIpv4(), tcp);
          proven = seen.toBase58().equals(guest.peerId());
          last = proven ? "handshake proved " + seen : "the handshake with " + libp2p
              + " proved " + seen;
        } catch (final IOException e) {
          last = e.getMessage();
        }
      }
      if (proven) {
        try {
          final GuestHttpClient.Response response = context.http().get(health);
          final String seen = response.body().path("peerId").asText("");
          if (response.status() == 200 && guest.peerId().equals(seen)) {
            return;
          }
          last = health + " answered " + response.status() + (seen.isEmpty() ? ""
              : " as " + seen);
        } catch (final IOException e) {
          last = health + ": " + e.getClass().getSimpleName() + (e.getMessage() == null ? ""
              : ": " + e.getMessage());
        }
      }
      attempt.checkRunning();
      if (!context.clock().instant().isBefore(deadline)) {
        throw new AttemptFailed((proven ? "the relay proved PeerId " + guest.peerId()
            + " by a libp2p handshake at " + libp2p + ", but " + health + " never answered "
            + "with it" : "the relay never proved PeerId " + guest.peerId() + " by a libp2p "
            + "handshake at " + libp2p) + " within " + context.config().relayTimeout()
            .toSeconds() + " s (last: " + last + ")");
      }
      context.pause();
    }
  }
}
