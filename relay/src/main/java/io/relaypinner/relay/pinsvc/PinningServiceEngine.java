package io.relaypinner.relay.pinsvc;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.common.Failures;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.storage.PinHolders;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of the IPFS Pinning Service API v1 (ipfs/pinning-services-api-spec): pin requests per
 * token owner, their statuses ({@code queued → pinning → pinned | failed}), filters and
 * pagination, quotas, persisted in the datastore under {@code /pinsvc/<owner>/<requestid>} (the
 * owner is a hash of the token; the token itself is never stored). Restarted requests that were
 * still queued or pinning are started again by {@link #load()}.
 *
 * <p>The pin work goes through a {@link Pinner} (the relay: dial the origins, fetch the DAG over
 * bitswap, pin it). Every request holds its pin under a holder of its own
 * ({@code pinsvc:<owner>/<requestid>}, see {@code PinHolders}); removing (or replacing) a request
 * releases exactly that hold, so the CID stays pinned while anything else holds it (replication
 * of a database naming it, an import, another request, in whatever CID text each sent it) and
 * its blocks become garbage only when nothing does. A request removed while its pin still runs
 * releases the hold the pin takes when it finishes. Requests recorded before holders existed hold
 * their CID through the {@code legacy:} holder, which nothing releases. No Netty; the clock is
 * injected; every method is thread-safe.
 */
public final class PinningServiceEngine {
  private static final Logger LOG = LoggerFactory.getLogger(PinningServiceEngine.class);
  static final String PREFIX = "/pinsvc/";

  /** Does the pin work. */
  public interface Pinner {
    /**
     * Dials {@code origins} (best effort), fetches the DAG under {@code cid} and pins it for
     * {@code holder}.
     */
    CompletableFuture<?> pin(Cid cid, PinHolder holder, List<Multiaddr> origins);

    /**
     * Releases {@code holder}'s hold on {@code cid} (nothing when it holds none); the blocks go
     * at the next GC once nothing holds the CID. Returns whether anything still holds it.
     */
    boolean release(Cid cid, PinHolder holder);
  }

  /** Bounds on what one token may ask. */
  public record Limits(int maxPinsPerToken, int maxOrigins, int maxNameLength, int maxMetaEntries,
      int maxMetaValueLength) {
    public static final Limits DEFAULT = new Limits(1000, 20, 255, 32, 1024);
  }

  /** What the API's clients did wrong, with the spec's {@code reason} and HTTP status. */
  public static final class RequestException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final String reason;

    RequestException(final int status, final String reason, final String details) {
      super(details, null, false, false);
      this.status = status;
      this.reason = reason;
    }

    public int status() {
      return status;
    }

    public String reason() {
      return reason;
    }
  }

  /** The query of {@code GET /pins}. */
  public record Filter(Optional<Set<String>> cids, Optional<String> name, String match,
      Set<String> statuses, Optional<Instant> before, Optional<Instant> after, int limit,
      Map<String, String> meta) {}

  /** A page of results and the total that matched. */
  public record Page(int count, List<PinStatusRecord> results) {}

  private final Datastore datastore;
  private final Clock clock;
  private final Pinner pinner;
  private final Supplier<List<String>> delegates;
  private final Limits limits;
  private final ObjectMapper json;
  private final SecureRandom random = new SecureRandom();
  /** owner → requestid → record, guarded by this. */
  private final Map<String, Map<String, PinStatusRecord>> byOwner = new HashMap<>();
  private final AtomicLong quotaRefused = new AtomicLong();
  private final AtomicLong released = new AtomicLong();
  private final AtomicLong releasedStillHeld = new AtomicLong();
  private final AtomicLong releasedAfterRemoval = new AtomicLong();

  public PinningServiceEngine(final Datastore datastore, final Clock clock, final Pinner pinner,
      final Supplier<List<String>> delegates, final Limits limits, final ObjectMapper json) {
    this.datastore = Objects.requireNonNull(datastore, "datastore");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.pinner = Objects.requireNonNull(pinner, "pinner");
    this.delegates = Objects.requireNonNull(delegates, "delegates");
    this.limits = Objects.requireNonNull(limits, "limits");
    this.json = Objects.requireNonNull(json, "json");
  }

  /** The owner key of a token: its SHA-256, hex, first 16 bytes. */
  public static String owner(final String token) {
    try {
      final byte[] digest = MessageDigest.getInstance("SHA-256")
          .digest(token.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 16);
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 missing from the JVM", e);
    }
  }

  /** Reads the persisted requests and starts again the ones not finished. */
  public void load() {
    final List<PinStatusRecord> unfinished = new ArrayList<>();
    synchronized (this) {
      for (final Datastore.Entry entry : datastore.scan(PREFIX)) {
        try {
          final PinStatusRecord record = json.readValue(entry.value(), PinStatusRecord.class);
          byOwner.computeIfAbsent(record.owner(), o -> new LinkedHashMap<>())
              .put(record.requestid(), record);
          if (!PinStatusRecord.PINNED.equals(record.status())
              && !PinStatusRecord.FAILED.equals(record.status())) {
            unfinished.add(record);
          }
        } catch (final IOException e) {
          LOG.warn("ignoring unreadable pin request {}: {}", entry.key(), e.getMessage());
        }
      }
    }
    unfinished.forEach(this::start);
    LOG.info("pinning service: {} request(s) loaded, {} restarted", count(), unfinished.size());
  }

  private synchronized int count() {
    return byOwner.values().stream().mapToInt(Map::size).sum();
  }

  /**
   * {@code POST /pins}: records the request as {@code queued} and starts it.
   *
   * @throws RequestException 400 on a bad CID, name, origin or meta; 409 over the quota
   */
  public PinStatusRecord add(final String owner, final PinStatusRecord.Pin pin)
      throws RequestException {
    final PinStatusRecord.Pin checked = check(pin);
    final PinStatusRecord record;
    synchronized (this) {
      final Map<String, PinStatusRecord> mine =
          byOwner.computeIfAbsent(owner, o -> new LinkedHashMap<>());
      if (mine.size() >= limits.maxPinsPerToken()) {
        quotaRefused.incrementAndGet();
        throw new RequestException(409, "INSUFFICIENT_FUNDS", "this token holds "
            + mine.size() + " pin requests, its quota is " + limits.maxPinsPerToken());
      }
      record = new PinStatusRecord(newId(), PinStatusRecord.QUEUED,
          clock.instant().truncatedTo(ChronoUnit.MILLIS).toString(), checked, delegates.get(),
          Map.of(), owner, null);
      mine.put(record.requestid(), record);
      persist(record);
    }
    start(record);
    return record;
  }

  /** {@code GET /pins/{requestid}}: only the owner's own requests are visible. */
  public synchronized Optional<PinStatusRecord> get(final String owner, final String id) {
    final Map<String, PinStatusRecord> mine = byOwner.get(owner);
    return mine == null ? Optional.empty() : Optional.ofNullable(mine.get(id));
  }

  /**
   * {@code POST /pins/{requestid}}: a new request replaces the old one (whose hold is released;
   * the new request takes its own).
   *
   * @throws RequestException 404 when the id is not the owner's; as {@link #add} otherwise
   */
  public PinStatusRecord replace(final String owner, final String id,
      final PinStatusRecord.Pin pin) throws RequestException {
    check(pin);
    if (get(owner, id).isEmpty()) {
      throw new RequestException(404, "NOT_FOUND", "no pin request " + id);
    }
    remove(owner, id);
    return add(owner, pin);
  }

  /**
   * {@code DELETE /pins/{requestid}}: releases the request's own hold (the CID stays pinned while
   * anything else holds it); false when the id is not the owner's.
   */
  public boolean remove(final String owner, final String id) {
    final PinStatusRecord removed;
    synchronized (this) {
      final Map<String, PinStatusRecord> mine = byOwner.get(owner);
      removed = mine == null ? null : mine.remove(id);
      if (removed == null) {
        return false;
      }
      if (mine.isEmpty()) {
        byOwner.remove(owner);
      }
      datastore.delete(key(removed));
    }
    // A pin still running takes its hold when it ends: start() releases it then.
    release(removed);
    return true;
  }

  private void release(final PinStatusRecord record) {
    released.incrementAndGet();
    if (pinner.release(Cid.parse(record.pin().cid()), holder(record))) {
      releasedStillHeld.incrementAndGet();
    }
  }

  /** The holder of a request's pin. */
  static PinHolder holder(final PinStatusRecord record) {
    return PinHolders.request(record.owner(), record.requestid());
  }

  /** {@code GET /pins}: the owner's requests that match, newest first, at most the limit. */
  public synchronized Page list(final String owner, final Filter filter) {
    final Map<String, PinStatusRecord> mine = byOwner.getOrDefault(owner, Map.of());
    final List<PinStatusRecord> matched = new ArrayList<>();
    for (final PinStatusRecord record : mine.values()) {
      if (matches(record, filter)) {
        matched.add(record);
      }
    }
    matched.sort(Comparator.comparing((PinStatusRecord r) -> Instant.parse(r.created()))
        .thenComparing(PinStatusRecord::requestid).reversed());
    return new Page(matched.size(),
        List.copyOf(matched.subList(0, Math.min(filter.limit(), matched.size()))));
  }

  private static boolean matches(final PinStatusRecord record, final Filter filter) {
    if (!filter.statuses().contains(record.status())) {
      return false;
    }
    if (filter.cids().isPresent() && filter.cids().get().stream().map(
        PinningServiceEngine::canonical).noneMatch(canonical(record.pin().cid())::equals)) {
      return false;
    }
    final Instant created = Instant.parse(record.created());
    if (filter.before().isPresent() && !created.isBefore(filter.before().get())) {
      return false;
    }
    if (filter.after().isPresent() && !created.isAfter(filter.after().get())) {
      return false;
    }
    if (filter.name().isPresent()) {
      final String name = record.pin().name() == null ? "" : record.pin().name();
      final String want = filter.name().get();
      final boolean ok = switch (filter.match()) {
        case "iexact" -> name.equalsIgnoreCase(want);
        case "partial" -> name.contains(want);
        case "ipartial" -> name.toLowerCase(Locale.ROOT).contains(want.toLowerCase(Locale.ROOT));
        default -> name.equals(want);
      };
      if (!ok) {
        return false;
      }
    }
    final Map<String, String> meta = record.pin().meta() == null ? Map.of() : record.pin().meta();
    for (final Map.Entry<String, String> wanted : filter.meta().entrySet()) {
      if (!wanted.getValue().equals(meta.get(wanted.getKey()))) {
        return false;
      }
    }
    return true;
  }

  /**
   * The canonical text of a CID as a client sent it ({@link Cid#canonical()}), so that
   * {@code BAFY…}, {@code bafy…}, {@code zb2…} and {@code Qm…} of one CID compare equal; text that
   * is not a CID stays as it is (it matches nothing stored).
   */
  private static String canonical(final String text) {
    try {
      return Cid.parse(text).canonical().toString();
    } catch (final RuntimeException e) {
      return text;
    }
  }

  private void start(final PinStatusRecord record) {
    update(record, PinStatusRecord.PINNING, Map.of());
    final List<Multiaddr> origins = new ArrayList<>();
    if (record.pin().origins() != null) {
      record.pin().origins().forEach(o -> origins.add(Multiaddr.parse(o)));
    }
    final CompletableFuture<?> job;
    try {
      job = pinner.pin(Cid.parse(record.pin().cid()), holder(record), origins);
    } catch (final RuntimeException e) {
      update(record, PinStatusRecord.FAILED, Map.of("error", String.valueOf(e.getMessage())));
      return;
    }
    job.whenComplete((done, error) -> {
      if (error == null) {
        if (!update(record, PinStatusRecord.PINNED, Map.of())) {
          // Removed while its pin ran: remove() found no hold to release yet; this is it.
          releasedAfterRemoval.incrementAndGet();
          pinner.release(Cid.parse(record.pin().cid()), holder(record));
          LOG.debug("pinning service: {} released (request {} removed while pinning)",
              record.pin().cid(), record.requestid());
          return;
        }
        LOG.info("pinning service: {} pinned (request {})", record.pin().cid(),
            record.requestid());
      } else {
        final Throwable cause = Failures.unwrap(error);
        if (Failures.isFatal(cause)) {
          LOG.error("pinning service: {} failed (request {})", record.pin().cid(),
              record.requestid(), cause);
        } else {
          LOG.info("pinning service: {} failed (request {}): {}", record.pin().cid(),
              record.requestid(), cause.toString());
        }
        update(record, PinStatusRecord.FAILED, Map.of("error", cause.toString()));
      }
    });
  }

  /** Moves a request on, unless it was removed meanwhile; false then. */
  private synchronized boolean update(final PinStatusRecord record, final String status,
      final Map<String, String> info) {
    final Map<String, PinStatusRecord> mine = byOwner.get(record.owner());
    if (mine == null || !mine.containsKey(record.requestid())) {
      return false;
    }
    final PinStatusRecord next = mine.get(record.requestid()).withStatus(status, info);
    mine.put(record.requestid(), next);
    persist(next);
    return true;
  }

  private void persist(final PinStatusRecord record) {
    try {
      datastore.put(key(record), json.writeValueAsBytes(record));
    } catch (final IOException e) {
      throw new IllegalStateException("cannot serialize a pin request", e);
    }
  }

  private static String key(final PinStatusRecord record) {
    return PREFIX + record.owner() + "/" + record.requestid();
  }

  private String newId() {
    final byte[] bytes = new byte[16];
    random.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /** Checks a {@code Pin} object; the CID is kept as sent (text). */
  private PinStatusRecord.Pin check(final PinStatusRecord.Pin pin) throws RequestException {
    if (pin == null || pin.cid() == null || pin.cid().isEmpty()) {
      throw new RequestException(400, "BAD_REQUEST", "the Pin object needs a cid");
    }
    try {
      Cid.parse(pin.cid());
    } catch (final RuntimeException e) {
      throw new RequestException(400, "BAD_REQUEST", "invalid cid: " + e.getMessage());
    }
    if (pin.name() != null && pin.name().length() > limits.maxNameLength()) {
      throw new RequestException(400, "BAD_REQUEST", "name longer than "
          + limits.maxNameLength() + " characters");
    }
    final List<String> origins = pin.origins() == null ? List.of() : pin.origins();
    if (origins.size() > limits.maxOrigins()) {
      throw new RequestException(400, "BAD_REQUEST", "more than " + limits.maxOrigins()
          + " origins");
    }
    for (final String origin : origins) {
      try {
        Multiaddr.parse(origin);
      } catch (final RuntimeException e) {
        throw new RequestException(400, "BAD_REQUEST", "origin " + origin
            + " is not a multiaddr: " + e.getMessage());
      }
    }
    final Map<String, String> meta = pin.meta() == null ? Map.of() : pin.meta();
    if (meta.size() > limits.maxMetaEntries()) {
      throw new RequestException(400, "BAD_REQUEST", "more than " + limits.maxMetaEntries()
          + " meta entries");
    }
    for (final Map.Entry<String, String> entry : meta.entrySet()) {
      if (entry.getKey().length() > limits.maxMetaValueLength() || entry.getValue() == null
          || entry.getValue().length() > limits.maxMetaValueLength()) {
        throw new RequestException(400, "BAD_REQUEST", "meta entries are strings of at most "
            + limits.maxMetaValueLength() + " characters");
      }
    }
    return new PinStatusRecord.Pin(pin.cid(), pin.name(), List.copyOf(origins), Map.copyOf(meta));
  }

  /** For tests and metrics: requests per status. */
  public synchronized Map<String, Integer> statusCounts() {
    final Map<String, Integer> out = new HashMap<>();
    byOwner.values().forEach(m -> m.values().forEach(r -> out.merge(r.status(), 1, Integer::sum)));
    return out;
  }

  /**
   * Counters for {@code /metrics}: {@code quota} (adds refused over a token's quota, 409),
   * {@code released} (holds released by removed or replaced requests), {@code still_held} (of
   * those, CIDs something else still holds: nothing freed), {@code released_after_removal}
   * (pins that finished after their request was removed, released then).
   */
  public Map<String, Long> counters() {
    return Map.of("quota", quotaRefused.get(), "released", released.get(), "still_held",
        releasedStillHeld.get(), "released_after_removal", releasedAfterRemoval.get());
  }

  /** Whether {@code owner} has a request; for {@link Predicate} users. */
  public synchronized boolean hasRequests(final String owner) {
    return byOwner.containsKey(owner) && !byOwner.get(owner).isEmpty();
  }
}
