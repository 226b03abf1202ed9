package io.relaypinner.handoff.guest;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.common.Shutdown;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.RecordStoreException;
import io.relaypinner.handoff.records.SignedPayload;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.WalletFormatException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest's bootstrap registration (spec 3.3 step 6, 3.4; notes/handoff.md 7): once the relay
 * runs, a POST of type {@code relay-bootstrap-v2}, ref {@code simple-todo-bootstrap}, channel
 * {@code simple-todo}, sent and signed by the publisher key, carrying the relay's PeerId,
 * multiaddrs, publisher address and registration id, and a {@code relayProof} (the publisher key's
 * EIP-191 signature over the RFC 8785 canonical JSON of {@code {peerId, multiaddrs,
 * registrationId, profile, updatedAt}}).
 *
 * <p>Trust mode: {@code dual-key-attested} with an owner authorization that verifies (signed by its
 * owner, binding this publisher address and this PeerId, not expired), carried as
 * {@code authorization} with {@code ownerAddress}; {@code wallet-signed} otherwise (the reason is
 * logged). It is republished every refresh interval and at once when the owner authorization
 * changes; each new post FORGETs the guest's earlier ones, and {@link #close()} FORGETs them all
 * (a clean shutdown leaves no stale registration; a crash leaves the last one to age out).
 */
public final class RegistrationPublisher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RegistrationPublisher.class);
  /** Delay before another attempt after a failed publish. */
  private static final Duration RETRY_DELAY = Duration.ofSeconds(15);
  /** How long {@link #close} lets a publication finish before the registrations are forgotten. */
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

  private final GuestAgent agent;
  private final RecordStore store;
  private final Duration refreshInterval;
  private final Clock clock;
  private final ScheduledExecutorService scheduler;
  private final List<String> published = new ArrayList<>();
  private ScheduledFuture<?> next;
  private String trustMode;
  private boolean closed;

  public RegistrationPublisher(final GuestAgent agent, final RecordStore store,
      final Duration refreshInterval, final Clock clock) {
    this.agent = Objects.requireNonNull(agent, "agent");
    this.store = Objects.requireNonNull(store, "store");
    this.refreshInterval = Objects.requireNonNull(refreshInterval, "refreshInterval");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      final Thread thread = new Thread(r, "guest-registration");
      thread.setDaemon(true);
      return thread;
    });
  }

  /** Publishes whenever the guest is (re)configured, and refreshes periodically. */
  public void start() {
    agent.onConfigured(configured -> schedule(Duration.ZERO));
    if (agent.configured().isPresent()) {
      schedule(Duration.ZERO);
    }
  }

  /** The trust mode of the last registration published, if any. */
  public synchronized Optional<String> trustMode() {
    return Optional.ofNullable(trustMode);
  }

  /** Item hashes of the registrations published and not forgotten yet, oldest first. */
  public synchronized List<String> published() {
    return List.copyOf(published);
  }

  private synchronized void schedule(final Duration delay) {
    if (closed) {
      return;
    }
    if (next != null) {
      next.cancel(false);
    }
    next = scheduler.schedule(this::publishSafely, delay.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void publishSafely() {
    try {
      if (publish()) {
        schedule(refreshInterval);
      }
    } catch (final RecordStoreException | RecordRejectedException e) {
      LOG.warn("registration not published ({}); retrying in {} s", e.getMessage(),
          RETRY_DELAY.toSeconds());
      schedule(RETRY_DELAY);
    } catch (final RuntimeException e) {
      LOG.error("registration failed; retrying in {} s", RETRY_DELAY.toSeconds(), e);
      schedule(RETRY_DELAY);
    }
  }

  /** One publication; false when there is nothing to register (no relay running). */
  private boolean publish() {
    final Optional<GuestAgent.Configured> now = agent.configured();
    if (now.isEmpty() || now.get().relay().isEmpty()) {
      return false;
    }
    final GuestAgent.Configured configured = now.get();
    final GuestStateDir state = agent.state();
    final String peerId = state.relayPeerId().toBase58();
    final String profile = agent.settings().profile();
    final String registrationId = configured.config().registrationId()
        .orElse("relay:" + profile + ":" + peerId);
    final Set<String> multiaddrs = new LinkedHashSet<>(configured.addresses().all());
    configured.relay().get().multiaddrs().stream().filter(a -> a.contains("/p2p/"))
        .forEach(multiaddrs::add);
    final long updatedAt = clock.millis();

    final Optional<OwnerAuthorization> authorization = authorization(configured, peerId);
    final JsonNodeFactory f = JsonNodeFactory.instance;
    final ObjectNode proofPayload = f.objectNode();
    proofPayload.put("peerId", peerId);
    multiaddrs.forEach(proofPayload.putArray("multiaddrs")::add);
    proofPayload.put("registrationId", registrationId);
    proofPayload.put("profile", profile);
    proofPayload.put("updatedAt", updatedAt);
    final ObjectNode content = f.objectNode();
    content.put("peerId", peerId);
    content.set("multiaddrs", proofPayload.get("multiaddrs").deepCopy());
    configured.addresses().browserBootstrap()
        .forEach(content.putArray("browserMultiaddrs")::add);
    content.put("registrationId", registrationId);
    content.put("profile", profile);
    content.putNull("version");
    content.put("ownerAddress", authorization.map(a -> a.owner().toString())
        .or(() -> configured.config().ownerAddress()).orElse(null));
    content.put("publisherAddress", state.publisherKey().address());
    content.set("authorization", authorization.map(OwnerAuthorization::json)
        .orElse(f.nullNode()));
    content.set("relayProof",
        SignedPayload.sign(state.publisherKey().ethKey(), proofPayload).toJson());
    content.put("updatedAt", updatedAt);
    final String mode = authorization.isPresent()
        ? GuestRecords.DUAL_KEY_ATTESTED : GuestRecords.WALLET_SIGNED;
    content.put("trustMode", mode);

    final AlephMessage message = signer().post(GuestRecords.REGISTRATION_POST_TYPE,
        GuestRecords.REGISTRATION_REF, content, GuestRecords.CHANNEL);
    store.publish(message);
    final List<String> previous;
    synchronized (this) {
      previous = List.copyOf(published);
      published.add(message.itemHash());
      trustMode = mode;
    }
    LOG.info("registration {} published ({}, {} addresses)", message.itemHash(), mode,
        multiaddrs.size());
    if (!previous.isEmpty()) {
      forget(previous, "superseded by " + message.itemHash());
    }
    return true;
  }

  private Optional<OwnerAuthorization> authorization(final GuestAgent.Configured configured,
      final String peerId) {
    final Optional<String> b64 = configured.config().ownerAuthorizationB64();
    if (b64.isEmpty()) {
      return Optional.empty();
    }
    EthAddress expectedOwner = null;
    try {
      expectedOwner = configured.config().ownerAddress().map(EthAddress::parse).orElse(null);
    } catch (final WalletFormatException e) {
      LOG.warn("bootstrap_owner_address is not an address: {}", e.getMessage());
    }
    try {
      return Optional.of(OwnerAuthorization.verify(b64.get(), expectedOwner,
          agent.state().publisherKey().ethKey().address(), peerId, clock));
    } catch (final OwnerAuthorization.InvalidAuthorizationException e) {
      LOG.warn("owner authorization not used, registering wallet-signed: {}", e.getMessage());
      return Optional.empty();
    }
  }

  private void forget(final List<String> hashes, final String reason) {
    try {
      store.publish(signer().forget(hashes, List.of(), reason, GuestRecords.CHANNEL));
      synchronized (this) {
        published.removeAll(hashes);
      }
    } catch (final RecordStoreException | RecordRejectedException e) {
      LOG.warn("cannot forget registrations {}: {}", hashes, e.getMessage());
    }
  }

  /** Stops refreshing and FORGETs every registration this guest published (bounded). */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      if (next != null) {
        next.cancel(false);
      }
    }
    Shutdown.shutdownGracefully(scheduler, CLOSE_WAIT, false, "registration publisher");
    final List<String> toForget = published();
    if (!toForget.isEmpty()) {
      forget(toForget, "relay shut down");
      LOG.info("registrations {} forgotten", toForget);
    }
  }

  /** Signs with the publisher key in use now (a configuration may have replaced it, spec 2.9). */
  private RecordSigner signer() {
    return new RecordSigner(agent.state().publisherKey().ethKey(), clock);
  }
}
