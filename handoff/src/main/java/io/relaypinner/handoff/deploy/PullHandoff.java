package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.guest.Acknowledgement;
import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordStoreException;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pull handoff (spec 3.3): the configuration is published as the token's entry of the
 * wallet's {@code vm-bootstrap-config} aggregate; the guest acknowledges with a post that proves
 * its publisher address and its PeerId. No request goes to the setup endpoint.
 *
 * <p>Trust (docs/handoff.md "Trust model"): the token is public (it is in the instance's SSH key,
 * and the entry is in a public aggregate), so a verified acknowledgement only proves that
 * <em>someone</em> holding that PeerId's key vouches for that publisher. Which of possibly many
 * such claims is the guest is decided by a libp2p Noise handshake with the libp2p TCP port the
 * provider allocated for this instance: only the acknowledgement naming the PeerId proven there is
 * taken, whatever arrived first, and only then is the owner authorization signed and delivered
 * (a second entry for the token). From an HTTPS origin, which cannot dial, no authorization is
 * ever published: the guest registers {@code wallet-signed} (spec 3.3.6).
 */
final class PullHandoff implements Handoff {
  private static final Logger LOG = LoggerFactory.getLogger(PullHandoff.class);
  /**
   * Pages of acknowledgement posts read per poll, newest first, stopping at the first post older
   * than this deployment's entry (it cannot acknowledge a token not yet published): hiding the
   * guest's post would take 2,000 posts of the type after it, within the wait.
   */
  private static final int ACK_PAGES = 20;
  /** Clock skew allowed between this machine and a post's {@code time}. */
  private static final Duration ACK_TIME_SKEW = Duration.ofMinutes(5);
  private static final int ACK_PAGE_SIZE = 100;
  private static final int MAX_JUDGED = 20_000;

  private final DeployContext context;
  private final String token = UUID.randomUUID().toString();
  private final AttemptRecords records;
  /** Acknowledgements already reported as refused (one log line each). */
  private final Set<String> refused = new HashSet<>();
  /**
   * Posts already judged, by item hash: the verified acknowledgement, or empty when its content
   * or signatures failed. A post's content never changes, so each is verified once however
   * often the pages are read; forgotten beyond {@link #MAX_JUDGED} (then judged again).
   */
  private final Map<String, Optional<Acknowledgement.Verified>> judged = new HashMap<>();
  /** Posts older than this cannot acknowledge this deployment (its entry came later). */
  private Instant notBefore = Instant.EPOCH;

  PullHandoff(final DeployContext context) {
    this.context = context;
    this.records = new AttemptRecords(context, token);
  }

  @Override
  public String authorizedKey(final String sshKey) {
    return SshKeys.withLocator(sshKey, context.owner(), token);
  }

  @Override
  public HandoffGuest handOff(final Attempt attempt) throws AttemptFailed, InterruptedException {
    attempt.stage("publishing-config", "publishing " + GuestRecords.CONFIG_AGGREGATE_KEY
        + " entry " + token, 20);
    notBefore = context.clock().instant().minus(ACK_TIME_SKEW);
    records.publishEntry(entry(attempt, null));
    attempt.stage("waiting-for-acknowledgement", "waiting up to "
        + context.config().ackTimeout().toSeconds() + " s for the guest's "
        + GuestRecords.ACK_POST_TYPE + " post", 35);
    if (!context.config().canDial()) {
      final Acknowledgement.Verified ack = awaitSoleAcknowledgement(attempt);
      attempt.warn("no owner authorization published: a page served over HTTPS ("
          + context.config().origin().orElseThrow() + ") cannot open a libp2p connection to "
          + "the instance to prove which PeerId runs there, and the acknowledgement alone "
          + "proves only that someone holds PeerId " + ack.peerId() + "; the guest registers "
          + "wallet-signed (spec 3.3.6)");
      return new HandoffGuest(ack.peerId(), ack.publisher(), ack.probeMultiaddrs(), false,
          false);
    }
    final Acknowledgement.Verified ack = awaitProvenAcknowledgement(attempt);
    attempt.stage("authorizing", "acknowledged by publisher " + ack.publisher() + " for peer "
        + ack.peerId() + ", proven at the instance's libp2p port; delivering the owner "
        + "authorization", 60);
    final Instant now = context.clock().instant();
    records.publishEntry(entry(attempt, DeployController.signOwnerAuthorization(
        context.wallet(), ack.publisher(), ack.peerId(), attempt.registrationId(),
        attempt.manifest(), attempt.instance().itemHash(), now,
        now.plus(context.config().authorizationValidity()))));
    return new HandoffGuest(ack.peerId(), ack.publisher(), ack.probeMultiaddrs(), true, true);
  }

  /**
   * Waits for a verified acknowledgement whose PeerId a Noise handshake proves at the instance's
   * allocated libp2p TCP port. Acknowledgements naming any other PeerId are never taken, however
   * early they came.
   */
  private Acknowledgement.Verified awaitProvenAcknowledgement(final Attempt attempt)
      throws AttemptFailed, InterruptedException {
    final HostInstance instance = attempt.instance();
    final int tcp = attempt.requiredPort(ImageManifest.TCP_PORT, "libp2p TCP");
    final Instant deadline = context.clock().instant().plus(context.config().ackTimeout());
    String lastError = null;
    while (true) {
      try {
        final List<Acknowledgement.Verified> acks = findAcknowledgements(attempt);
        if (!acks.isEmpty()) {
          final String proven = context.handshake().prove(instance.publicIpv4(), tcp)
              .toBase58();
          final Optional<Acknowledgement.Verified> match = acks.stream()
              .filter(ack -> ack.peerId().equals(proven)).findFirst();
          if (match.isPresent()) {
            return match.get();
          }
          for (final Acknowledgement.Verified ack : acks) {
            if (refused.add(ack.peerId() + " " + ack.publisher())) {
              LOG.warn("refused an acknowledgement of token {} by publisher {} for PeerId {}: "
                  + "the instance's libp2p port {}:{} proves PeerId {} (a stranger who read the "
                  + "public entry, or a guest not yet listening)", token, ack.publisher(),
                  ack.peerId(), instance.publicIpv4(), tcp, proven);
            }
          }
          lastError = "the relay at " + Attempt.hostLiteral(instance.publicIpv4()) + ":" + tcp
              + " proved PeerId " + proven + ", which no acknowledgement names (they name "
              + acks.stream().map(Acknowledgement.Verified::peerId).toList() + ")";
        }
      } catch (final RecordRejectedException | RecordStoreException e) {
        lastError = e.getMessage();
      } catch (final IOException e) {
        lastError = "acknowledged, but " + e.getMessage();
      }
      attempt.checkRunning();
      if (!context.clock().instant().isBefore(deadline)) {
        throw new AttemptFailed(lastError == null ? "no verified acknowledgement of token "
            + token + " within " + context.config().ackTimeout().toSeconds() + " s"
            : "no acknowledgement of token " + token + " proven by a libp2p handshake at the "
            + "instance within " + context.config().ackTimeout().toSeconds() + " s ("
            + lastError + ")");
      }
      context.pause();
    }
  }

  /**
   * From an origin that cannot dial: waits for exactly one verified acknowledgement. Several
   * cannot be told apart there, so they fail the attempt (no authorization is published in any
   * case).
   */
  private Acknowledgement.Verified awaitSoleAcknowledgement(final Attempt attempt)
      throws AttemptFailed, InterruptedException {
    final Instant deadline = context.clock().instant().plus(context.config().ackTimeout());
    String lastError = null;
    while (true) {
      try {
        final List<Acknowledgement.Verified> acks = findAcknowledgements(attempt);
        if (acks.size() == 1) {
          return acks.get(0);
        }
        if (acks.size() > 1) {
          lastError = acks.size() + " conflicting acknowledgements (PeerIds "
              + acks.stream().map(Acknowledgement.Verified::peerId).toList() + "), which an "
              + "HTTPS origin cannot tell apart (it cannot dial the instance)";
        }
      } catch (final RecordRejectedException | RecordStoreException e) {
        lastError = e.getMessage();
      }
      attempt.checkRunning();
      if (!context.clock().instant().isBefore(deadline)) {
        throw new AttemptFailed("no verified acknowledgement of token " + token + " within "
            + context.config().ackTimeout().toSeconds() + " s" + (lastError == null ? ""
            : " (" + lastError + ")"));
      }
      context.pause();
    }
  }

  /** Every distinct verified acknowledgement of this token, owner and instance. */
  private List<Acknowledgement.Verified> findAcknowledgements(final Attempt attempt) {
    final String owner = context.owner().toString();
    final String itemHash = attempt.instance().itemHash();
    final List<Acknowledgement.Verified> found = new ArrayList<>();
    for (int page = 1; page <= ACK_PAGES; page++) {
      final List<PostRecord> posts = context.store().posts(PostQuery.builder()
          .types(GuestRecords.ACK_POST_TYPE).refs(GuestRecords.ACK_REF)
          .pagination(ACK_PAGE_SIZE).page(page).build()).posts();
      if (judged.size() > MAX_JUDGED) {
        judged.clear();
      }
      for (final PostRecord post : posts) {
        judged.computeIfAbsent(post.itemHash(), hash -> judge(post, owner, itemHash))
            .filter(ack -> found.stream().noneMatch(f -> f.peerId().equals(ack.peerId())
                && f.publisher().equals(ack.publisher())))
            .ifPresent(found::add);
      }
      if (posts.size() < ACK_PAGE_SIZE || posts.stream().anyMatch(post ->
          post.time() * 1000 < notBefore.toEpochMilli())) {
        break;
      }
    }
    return found;
  }

  /** Cheap checks on the content first; signatures ({@link Acknowledgement#verify}) last. */
  private Optional<Acknowledgement.Verified> judge(final PostRecord post, final String owner,
      final String itemHash) {
    if (!token.equals(post.content().path("deploymentToken").asText())
        || !owner.equalsIgnoreCase(post.content().path("ownerAddress").asText(""))
        || !itemHash.equals(post.content().path("instanceItemHash").asText())) {
      return Optional.empty();
    }
    return Acknowledgement.verify(post, token);
  }

  /** The token's entry: the public deployment facts, and the authorization once signed. */
  private ObjectNode entry(final Attempt attempt, final String authorization) {
    final HostInstance instance = attempt.instance();
    final Instant now = context.clock().instant();
    final ObjectNode entry = JsonNodeFactory.instance.objectNode();
    entry.put("deploymentToken", token);
    entry.put("profile", attempt.manifest().profile());
    entry.put("ownerAddress", context.owner().toString());
    entry.put("instanceItemHash", instance.itemHash());
    entry.put("createdAt", now.toString());
    entry.put("expiresAt", now.plus(context.config().entryValidity()).toString());
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
    bootstrap.put("registrationId", attempt.registrationId());
    bootstrap.put("ownerAuthorizationBase64", authorization);
    return entry;
  }

  @Override
  public void completed(final String reason) {
    records.remove(reason);
  }

  @Override
  public void cleanUp(final String reason) {
    records.remove(reason);
  }

  @Override
  public List<String> forgotten() {
    return records.forgotten();
  }

  @Override
  public List<String> cleanupErrors() {
    return records.errors();
  }
}
