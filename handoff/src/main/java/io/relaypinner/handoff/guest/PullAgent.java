package io.relaypinner.handoff.guest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.common.Shutdown;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.RecordStoreException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pull handoff on the guest (spec 3.3; notes/handoff.md 3.3-3.5, without the image's bugs):
 *
 * <ol>
 *   <li>reads the locator ({@code aleph-bootstrap-config:<owner>:<token>}) from
 *       {@code authorized_keys}, again on every poll until it appears;
 *   <li>polls the owner's {@code vm-bootstrap-config} aggregate for the token's entry (only the
 *       owner can write its aggregate: an entry another key publishes lands under that key's
 *       address and is never read); applies a {@code pending}, unexpired entry addressed to this
 *       token and owner exactly like {@code POST /configure} (same validation);
 *   <li>publishes the acknowledgement ({@link Acknowledgement}) signed by the publisher key, and
 *       retries (publish, then check it is listed, republish after a few polls) until it is
 *       visible;
 *   <li>keeps polling the entry: an owner authorization the owner adds later is verified (owner's
 *       signature, this guest's publisher address and PeerId, not expired) and applied.
 * </ol>
 *
 * A guest configured by push stops pulling; a guest restarted with its stored configuration only
 * watches for a later owner authorization. Network and store errors are logged and retried on
 * the next poll; nothing here blocks an event loop (one scheduler thread).
 */
public final class PullAgent implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PullAgent.class);
  /** Polls without the acknowledgement listed before it is published again. */
  private static final int REPUBLISH_AFTER_POLLS = 6;
  private static final Duration CONFIGURE_WAIT = Duration.ofMinutes(2);
  /** How long {@link #close} waits for an interrupted poll to end. */
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

  private enum Phase { WAITING, ACKNOWLEDGING, WATCHING, STOPPED }

  private final GuestAgent agent;
  private final RecordStore store;
  private final Path authorizedKeys;
  private final Duration pollInterval;
  private final Clock clock;
  private final ScheduledExecutorService scheduler;

  private Phase phase = Phase.WAITING;
  private BootstrapLocator locator;
  private JsonNode appliedEntry;
  private String ackHash;
  private int pollsSinceAck;
  private String lastRejected;

  public PullAgent(final GuestAgent agent, final RecordStore store, final Path authorizedKeys,
      final Duration pollInterval, final Clock clock) {
    this.agent = Objects.requireNonNull(agent, "agent");
    this.store = Objects.requireNonNull(store, "store");
    this.authorizedKeys = Objects.requireNonNull(authorizedKeys, "authorizedKeys");
    this.pollInterval = Objects.requireNonNull(pollInterval, "pollInterval");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      final Thread thread = new Thread(r, "guest-pull");
      thread.setDaemon(true);
      return thread;
    });
  }

  /** Starts polling now, then every poll interval. */
  public void start() {
    scheduler.scheduleWithFixedDelay(this::pollSafely, 0, pollInterval.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Whether the acknowledgement was published and seen listed. */
  public synchronized boolean acknowledged() {
    return phase == Phase.WATCHING;
  }

  /** The item hash of the acknowledgement, once published. */
  public synchronized Optional<String> acknowledgementHash() {
    return Optional.ofNullable(ackHash);
  }

  private void pollSafely() {
    try {
      poll();
    } catch (final RecordStoreException | RecordRejectedException e) {
      LOG.debug("pull: record store: {}", e.getMessage());
    } catch (final IOException e) {
      LOG.warn("pull: {}", e.getMessage());
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (final RuntimeException e) {
      LOG.error("pull: unexpected failure (retried on the next poll)", e);
    }
  }

  synchronized void poll() throws IOException, InterruptedException {
    if (phase == Phase.STOPPED) {
      return;
    }
    if (phase == Phase.WAITING && agent.configured().isPresent()) {
      if (agent.configured().get().source() == GuestAgent.Source.STORED) {
        // Restarted after a configuration: only a later owner authorization is still to come.
        phase = Phase.WATCHING;
      } else {
        LOG.info("pull: the guest was configured by {}; not pulling",
            agent.configured().get().source().name().toLowerCase(Locale.ROOT));
        phase = Phase.STOPPED;
        return;
      }
    }
    if (locator == null) {
      locator = BootstrapLocator.read(authorizedKeys).orElse(null);
      if (locator == null) {
        return;
      }
      LOG.info("pull: watching {}'s {} entry {}", locator.owner(),
          GuestRecords.CONFIG_AGGREGATE_KEY, locator.token());
    }
    switch (phase) {
      case WAITING -> configureFromEntry();
      case ACKNOWLEDGING -> acknowledge();
      case WATCHING -> watchAuthorization();
      default -> {
        // stopped
      }
    }
  }

  private Optional<JsonNode> entry() {
    return store.aggregateEntry(locator.owner(), GuestRecords.CONFIG_AGGREGATE_KEY,
        locator.token()).filter(JsonNode::isObject);
  }

  private void configureFromEntry() throws InterruptedException {
    final Optional<JsonNode> found = entry();
    if (found.isEmpty()) {
      return;
    }
    final JsonNode entry = found.get();
    final ConfigureRequest request;
    try {
      request = toRequest(entry);
    } catch (final ConfigureRejectedException e) {
      final String key = entry.toString();
      if (!key.equals(lastRejected)) {
        LOG.warn("pull: entry {} not applied: {}", locator.token(), e.getMessage());
        lastRejected = key;
      }
      return;
    }
    try {
      agent.configure(request, GuestAgent.Source.PULL)
          .get(CONFIGURE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (final ExecutionException e) {
      if (e.getCause() instanceof ConfigureRejectedException rejected
          && "already_configured".equals(rejected.code())) {
        phase = Phase.STOPPED;
      }
      LOG.warn("pull: configuration not applied: {}", e.getCause().getMessage());
      return;
    } catch (final TimeoutException e) {
      LOG.warn("pull: configuration still being applied after {}", CONFIGURE_WAIT);
      return;
    }
    appliedEntry = entry;
    phase = Phase.ACKNOWLEDGING;
    acknowledge();
  }

  /** The entry as {@code /configure} fields, after the checks only the aggregate needs. */
  ConfigureRequest toRequest(final JsonNode entry) throws ConfigureRejectedException {
    if (!locator.token().equals(entry.path("deploymentToken").asText())) {
      throw new ConfigureRejectedException("invalid_entry", "deploymentToken is not this token");
    }
    final String owner = entry.path("ownerAddress").asText("");
    if (!owner.equalsIgnoreCase(locator.owner().toString())) {
      throw new ConfigureRejectedException("invalid_entry",
          "ownerAddress " + owner + " is not the owner in the SSH key comment");
    }
    if (!"pending".equalsIgnoreCase(entry.path("status").asText(""))) {
      throw new ConfigureRejectedException("invalid_entry",
          "status is " + entry.path("status") + ", not pending");
    }
    final String expires = entry.path("expiresAt").asText("");
    if (!expires.isEmpty()) {
      try {
        if (!Instant.parse(expires).isAfter(clock.instant())) {
          throw new ConfigureRejectedException("invalid_entry", "expired at " + expires);
        }
      } catch (final DateTimeParseException e) {
        throw new ConfigureRejectedException("invalid_entry", "expiresAt is not ISO-8601");
      }
    }
    final JsonNode runtime = entry.path("runtime");
    final JsonNode ports = runtime.path("mappedPorts");
    final ObjectNode fields = JsonNodeFactory.instance.objectNode();
    copy(runtime, "publicIpv4", fields, "public_ipv4");
    copy(runtime, "publicIpv6", fields, "public_ipv6");
    copy(runtime, "proxyUrl", fields, "proxy_url");
    // No fallback from 9092 to 443: both deployers dropped it (notes 3.4).
    copy(ports.path("9091"), "host", fields, "tcp_port");
    copy(ports.path("9092"), "host", fields, "ws_port");
    copy(ports.path("9090"), "host", fields, "metrics_port");
    copy(ports.path("443"), "host", fields, "metrics_https_port");
    copy(ports.path("9093"), "host", fields, "webrtc_port");
    copy(ports.path("9094"), "host", fields, "quic_port");
    copy(entry.path("bootstrap"), "registrationId", fields, "bootstrap_registration_id");
    fields.put("bootstrap_owner_address", locator.owner().toString());
    copy(entry.path("bootstrap"), "ownerAuthorizationBase64", fields,
        "bootstrap_owner_authorization_b64");
    return ConfigureRequest.fromObject(fields);
  }

  private static void copy(final JsonNode from, final String field, final ObjectNode to,
      final String name) {
    final JsonNode value = from.get(field);
    if (value != null && !value.isNull()) {
      to.set(name, value);
    }
  }

  private void acknowledge() {
    if (ackHash != null) {
      final boolean listed = !store.posts(PostQuery.builder().hashes(ackHash)
          .types(GuestRecords.ACK_POST_TYPE).build()).posts().isEmpty();
      if (listed) {
        LOG.info("pull: acknowledgement {} is visible", ackHash);
        phase = Phase.WATCHING;
        return;
      }
      if (++pollsSinceAck < REPUBLISH_AFTER_POLLS) {
        return;
      }
    }
    final GuestAgent.Configured configured = agent.configured().orElseThrow();
    final Optional<OwnerAuthorization> authorization = verifiedAuthorization(
        configured.config().ownerAuthorizationB64());
    final AlephMessage message = signer().post(GuestRecords.ACK_POST_TYPE, GuestRecords.ACK_REF,
        Acknowledgement.content(appliedEntry, locator.token(), agent.state(),
            configured.addresses(), authorization, clock.instant()), GuestRecords.CHANNEL);
    pollsSinceAck = 0;
    store.publish(message);
    ackHash = message.itemHash();
    LOG.info("pull: acknowledgement {} published", ackHash);
    // Checked on the next poll; a store that lists at once is seen now.
    if (!store.posts(PostQuery.builder().hashes(ackHash).build()).posts().isEmpty()) {
      LOG.info("pull: acknowledgement {} is visible", ackHash);
      phase = Phase.WATCHING;
    }
  }

  private Optional<OwnerAuthorization> verifiedAuthorization(final Optional<String> b64) {
    if (b64.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(OwnerAuthorization.verify(b64.get(), locator.owner(),
          agent.state().publisherKey().ethKey().address(),
          agent.state().relayPeerId().toBase58(), clock));
    } catch (final OwnerAuthorization.InvalidAuthorizationException e) {
      return Optional.empty();
    }
  }

  private void watchAuthorization() throws InterruptedException {
    final Optional<JsonNode> entry = entry();
    if (entry.isEmpty()) {
      return;
    }
    final JsonNode b64 = entry.get().path("bootstrap").path("ownerAuthorizationBase64");
    if (!b64.isTextual() || b64.asText().isBlank()) {
      return;
    }
    final String text = b64.asText().strip();
    final Optional<String> current = agent.configured()
        .flatMap(c -> c.config().ownerAuthorizationB64());
    if (current.isPresent() && current.get().equals(text) || text.equals(lastRejected)) {
      return;
    }
    try {
      OwnerAuthorization.verify(text, locator.owner(),
          agent.state().publisherKey().ethKey().address(),
          agent.state().relayPeerId().toBase58(), clock);
    } catch (final OwnerAuthorization.InvalidAuthorizationException e) {
      LOG.warn("pull: owner authorization ignored: {}", e.getMessage());
      lastRejected = text;
      return;
    }
    try {
      agent.applyOwnerAuthorization(text, locator.owner().toString())
          .get(CONFIGURE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (final ExecutionException | TimeoutException e) {
      LOG.warn("pull: owner authorization not applied: {}", e.getMessage());
    }
  }

  /** Stops polling (bounded). */
  @Override
  public void close() {
    synchronized (this) {
      phase = Phase.STOPPED;
    }
    Shutdown.shutdownGracefully(scheduler, CLOSE_WAIT, true, "pull agent");
  }

  /** Signs with the publisher key in use now (a configuration may have replaced it, spec 2.9). */
  private RecordSigner signer() {
    return new RecordSigner(agent.state().publisherKey().ethKey(), clock);
  }
}
