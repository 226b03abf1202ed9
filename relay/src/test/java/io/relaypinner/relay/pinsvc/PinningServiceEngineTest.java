package io.relaypinner.relay.pinsvc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.testkit.MutableClock;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link PinningServiceEngine} on a memory datastore, a {@link MutableClock} and a pinner whose
 * pins the test completes: the request lifecycle ({@code queued → pinning → pinned | failed}),
 * what removing a request releases (its own hold only, whatever CID spelling was sent), listing with every filter, the per-token bounds, and reloading
 * from the datastore. No sockets.
 */
class PinningServiceEngineTest {
  private static final Instant START = Instant.parse("2026-11-25T09:00:00.123456Z");
  private static final String ALICE = PinningServiceEngine.owner("alice-token");
  private static final String BOB = PinningServiceEngine.owner("bob-token");
  private static final Set<String> ALL_STATUSES = Set.of(PinStatusRecord.QUEUED,
      PinStatusRecord.PINNING, PinStatusRecord.PINNED, PinStatusRecord.FAILED);
  private static final String ORIGIN = "/ip4/127.0.0.1/tcp/4001/p2p/"
      + Keys.generate(KeyType.ED25519, new SecureRandom()).publicKey().peerId();

  private final MutableClock clock = new MutableClock(START);
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final FakePinner pinner = new FakePinner();
  private final ObjectMapper json = HttpResponses.newObjectMapper();

  /**
   * Pins the test completes, held per holder as the relay's pin store holds them (by canonical
   * CID); what is held, released and asked for.
   */
  private static final class FakePinner implements PinningServiceEngine.Pinner {
    /** Pins running, oldest first per CID. */
    final Map<Cid, ArrayDeque<CompletableFuture<Void>>> running = new HashMap<>();
    final List<Cid> asked = new ArrayList<>();
    final List<List<Multiaddr>> origins = new ArrayList<>();
    /** Canonical CID to its holders. */
    final Map<Cid, Set<PinHolder>> holds = new HashMap<>();
    final List<PinHolder> released = new ArrayList<>();
    RuntimeException refuse;

    @Override
    public CompletableFuture<?> pin(final Cid cid, final PinHolder holder,
        final List<Multiaddr> from) {
      if (refuse != null) {
        throw refuse;
      }
      asked.add(cid);
      origins.add(from);
      final CompletableFuture<Void> job = new CompletableFuture<>();
      running.computeIfAbsent(cid, c -> new ArrayDeque<>()).add(job);
      return job.thenRun(() -> hold(cid, holder));
    }

    @Override
    public boolean release(final Cid cid, final PinHolder holder) {
      final Set<PinHolder> holders = holds.getOrDefault(cid.canonical(), new HashSet<>());
      if (holders.remove(holder)) {
        released.add(holder);
      }
      return isPinned(cid);
    }

    void hold(final Cid cid, final PinHolder holder) {
      holds.computeIfAbsent(cid.canonical(), c -> new HashSet<>()).add(holder);
    }

    boolean isPinned(final Cid cid) {
      return !holds.getOrDefault(cid.canonical(), Set.of()).isEmpty();
    }

    void finish(final Cid cid) {
      running.get(cid).remove().complete(null);
    }

    void fail(final Cid cid, final Throwable error) {
      running.get(cid).remove().completeExceptionally(error);
    }
  }

  private PinningServiceEngine engine(final PinningServiceEngine.Limits limits) {
    return new PinningServiceEngine(datastore, clock, pinner,
        () -> List.of("/dns4/relay.example/tcp/443/wss"), limits, json);
  }

  private PinningServiceEngine engine() {
    return engine(PinningServiceEngine.Limits.DEFAULT);
  }

  private static Cid cid(final String seed) {
    return DagCbor.cid(seed.getBytes(StandardCharsets.UTF_8));
  }

  private static PinStatusRecord.Pin pin(final Cid cid) {
    return new PinStatusRecord.Pin(cid.toString(), null, null, null);
  }

  private static PinStatusRecord.Pin pin(final Cid cid, final String name,
      final Map<String, String> meta) {
    return new PinStatusRecord.Pin(cid.toString(), name, List.of(), meta);
  }

  private static PinningServiceEngine.Filter filter(final int limit) {
    return new PinningServiceEngine.Filter(Optional.empty(), Optional.empty(), "exact",
        ALL_STATUSES, Optional.empty(), Optional.empty(), limit, Map.of());
  }

  private static PinningServiceEngine.Filter byName(final String name, final String match) {
    return new PinningServiceEngine.Filter(Optional.empty(), Optional.of(name), match,
        ALL_STATUSES, Optional.empty(), Optional.empty(), 10, Map.of());
  }

  private String status(final PinningServiceEngine engine, final PinStatusRecord record) {
    return engine.get(record.owner(), record.requestid()).orElseThrow().status();
  }

  private PinStatusRecord stored(final PinStatusRecord record) throws Exception {
    return json.readValue(datastore.get(PinningServiceEngine.PREFIX + record.owner() + "/"
        + record.requestid()).orElseThrow(), PinStatusRecord.class);
  }

  @Test
  void add_shouldQueueThenPinThenReportPinned_persistingEachStatus() throws Exception {
    final PinningServiceEngine engine = engine();
    final Cid cid = cid("a");

    final PinStatusRecord queued = engine.add(ALICE, new PinStatusRecord.Pin(cid.toString(),
        "photo", List.of(ORIGIN), Map.of("app", "demo")));

    assertThat(queued.status()).isEqualTo(PinStatusRecord.QUEUED);
    assertThat(queued.requestid()).matches("[0-9a-f]{32}");
    assertThat(queued.created()).isEqualTo("2026-11-25T09:00:00.123Z");
    assertThat(queued.delegates()).containsExactly("/dns4/relay.example/tcp/443/wss");
    assertThat(queued.preexisting()).isNull();
    // Started at once: the pinner has it, with the request's origins.
    assertThat(status(engine, queued)).isEqualTo(PinStatusRecord.PINNING);
    assertThat(stored(queued).status()).isEqualTo(PinStatusRecord.PINNING);
    assertThat(pinner.asked).containsExactly(cid);
    assertThat(pinner.origins).containsExactly(List.of(Multiaddr.parse(ORIGIN)));
    assertThat(engine.statusCounts()).containsExactly(Map.entry(PinStatusRecord.PINNING, 1));

    pinner.finish(cid);

    assertThat(status(engine, queued)).isEqualTo(PinStatusRecord.PINNED);
    assertThat(stored(queued).status()).isEqualTo(PinStatusRecord.PINNED);
    assertThat(stored(queued).pin().name()).isEqualTo("photo");
    assertThat(engine.statusCounts()).containsExactly(Map.entry(PinStatusRecord.PINNED, 1));
    // The owner is a hash of the token; the token is never stored.
    assertThat(ALICE).matches("[0-9a-f]{32}")
        .isEqualTo(PinningServiceEngine.owner("alice-token")).isNotEqualTo(BOB);
    assertThat(new String(datastore.get(PinningServiceEngine.PREFIX + ALICE + "/"
        + queued.requestid()).orElseThrow(), StandardCharsets.UTF_8))
        .doesNotContain("alice-token");
  }

  @Test
  void add_shouldEndFailed_whenThePinFailsOrCannotStart() throws Exception {
    final PinningServiceEngine engine = engine();
    final PinStatusRecord late = engine.add(ALICE, pin(cid("late")));
    pinner.fail(cid("late"), new IllegalStateException("no provider"));

    final PinStatusRecord failed = engine.get(ALICE, late.requestid()).orElseThrow();
    assertThat(failed.status()).isEqualTo(PinStatusRecord.FAILED);
    assertThat(failed.info()).containsEntry("error",
        "java.lang.IllegalStateException: no provider");

    pinner.refuse = new IllegalStateException("storage full");
    final PinStatusRecord refused = engine.add(ALICE, pin(cid("refused")));
    assertThat(status(engine, refused)).isEqualTo(PinStatusRecord.FAILED);
    assertThat(engine.get(ALICE, refused.requestid()).orElseThrow().info())
        .containsEntry("error", "storage full");
  }

  @Test
  void get_shouldShowOnlyTheOwnersRequests() throws Exception {
    final PinningServiceEngine engine = engine();
    final PinStatusRecord mine = engine.add(ALICE, pin(cid("a")));

    assertThat(engine.get(ALICE, mine.requestid())).isPresent();
    assertThat(engine.get(BOB, mine.requestid())).isEmpty();
    assertThat(engine.remove(BOB, mine.requestid())).isFalse();
    assertThat(engine.hasRequests(ALICE)).isTrue();
    assertThat(engine.hasRequests(BOB)).isFalse();
    assertThatThrownBy(() -> engine.replace(BOB, mine.requestid(), pin(cid("b"))))
        .isInstanceOfSatisfying(PinningServiceEngine.RequestException.class, e -> {
          assertThat(e.status()).isEqualTo(404);
          assertThat(e.reason()).isEqualTo("NOT_FOUND");
        });
  }

  @Test
  void remove_shouldReleaseOnlyItsOwnHold_whateverSpellingOfTheCidEachRequestSent()
      throws Exception {
    final PinningServiceEngine engine = engine();
    final Cid shared = cid("shared");
    final String upper = shared.toString().toUpperCase(Locale.ROOT);
    final String base58 = shared.toString(Multibase.Base.BASE58BTC);
    final PinStatusRecord alices = engine.add(ALICE, pin(shared));
    final PinStatusRecord bobs = engine.add(BOB, new PinStatusRecord.Pin(upper, null, null,
        null));
    final PinStatusRecord bobsAgain = engine.add(BOB, new PinStatusRecord.Pin(base58, null,
        null, null));
    pinner.finish(shared);
    pinner.finish(shared);
    pinner.finish(shared);
    assertThat(pinner.holds.get(shared)).containsExactlyInAnyOrder(
        PinningServiceEngine.holder(alices), PinningServiceEngine.holder(bobs),
        PinningServiceEngine.holder(bobsAgain));

    assertThat(engine.remove(ALICE, alices.requestid())).isTrue();
    assertThat(pinner.released).containsExactly(PinningServiceEngine.holder(alices));
    assertThat(pinner.isPinned(shared)).isTrue();
    assertThat(datastore.get(PinningServiceEngine.PREFIX + ALICE + "/" + alices.requestid()))
        .isEmpty();
    assertThat(engine.remove(BOB, bobs.requestid())).isTrue();
    assertThat(pinner.isPinned(shared)).isTrue();
    assertThat(engine.remove(BOB, bobsAgain.requestid())).isTrue();
    assertThat(pinner.isPinned(shared)).isFalse();
    assertThat(engine.remove(BOB, bobs.requestid())).isFalse();
    assertThat(engine.counters()).containsEntry("released", 3L)
        .containsEntry("still_held", 2L);
  }

  @Test
  void remove_shouldLeaveReplicationsHold_whenTheRequestPinnedTheCidFirst() throws Exception {
    final PinningServiceEngine engine = engine();
    final Cid media = cid("media");
    final PinHolder database = PinHolder.of("replication", "/orbitdb/zdpuDatabase");
    // The tenant's request pins the media first (sent as uppercase base32), then a replicated
    // database names the same media; the tenant deletes the request.
    final PinStatusRecord request = engine.add(ALICE, new PinStatusRecord.Pin(
        media.toString().toUpperCase(Locale.ROOT), null, null, null));
    pinner.finish(media);
    pinner.hold(media, database);

    engine.remove(ALICE, request.requestid());

    assertThat(pinner.holds.get(media)).containsExactly(database);
    // And the other way round: replication first, then a request, then its removal.
    final Cid replicated = cid("replicated");
    pinner.hold(replicated, database);
    final PinStatusRecord late = engine.add(BOB, pin(replicated));
    assertThat(late.preexisting()).isNull();
    pinner.finish(replicated);
    engine.remove(BOB, late.requestid());
    assertThat(pinner.holds.get(replicated)).containsExactly(database);
  }

  @Test
  void remove_shouldKeepTheRequestGone_andReleaseThePin_whenItsPinEndsLater() throws Exception {
    final PinningServiceEngine engine = engine();
    final PinStatusRecord request = engine.add(ALICE, pin(cid("slow")));
    engine.remove(ALICE, request.requestid());
    // Nothing held yet when the request went.
    assertThat(pinner.released).isEmpty();

    pinner.finish(cid("slow"));

    assertThat(engine.get(ALICE, request.requestid())).isEmpty();
    assertThat(datastore.scan(PinningServiceEngine.PREFIX)).isEmpty();
    assertThat(engine.statusCounts()).isEmpty();
    // The pin that ended after its request was deleted is released, not left without owner.
    assertThat(pinner.isPinned(cid("slow"))).isFalse();
    assertThat(pinner.released).containsExactly(PinningServiceEngine.holder(request));
    assertThat(engine.counters()).containsEntry("released_after_removal", 1L)
        .containsEntry("released", 1L);
  }

  @Test
  void replace_shouldSwapTheRequest_forANewOneWithItsOwnId() throws Exception {
    final PinningServiceEngine engine = engine();
    final PinStatusRecord old = engine.add(ALICE, pin(cid("old")));
    pinner.finish(cid("old"));

    final PinStatusRecord next = engine.replace(ALICE, old.requestid(), pin(cid("new")));

    assertThat(next.requestid()).isNotEqualTo(old.requestid());
    assertThat(engine.get(ALICE, old.requestid())).isEmpty();
    assertThat(pinner.released).containsExactly(PinningServiceEngine.holder(old));
    assertThat(pinner.isPinned(cid("old"))).isFalse();
    assertThat(engine.list(ALICE, filter(10)).results()).extracting(PinStatusRecord::requestid)
        .containsExactly(next.requestid());
  }

  @Test
  void list_shouldApplyEveryFilter_newestFirst_upToTheLimit() throws Exception {
    final PinningServiceEngine engine = engine();
    final PinStatusRecord cat = engine.add(ALICE, pin(cid("cat"), "Cat picture",
        Map.of("app", "a", "kind", "image")));
    clock.advance(Duration.ofSeconds(1));
    final PinStatusRecord dog = engine.add(ALICE, pin(cid("dog"), "dog video",
        Map.of("app", "a")));
    clock.advance(Duration.ofSeconds(1));
    final PinStatusRecord cow = engine.add(ALICE, pin(cid("cow"), null, Map.of("app", "b")));
    engine.add(BOB, pin(cid("bobs"), "Cat picture", Map.of()));
    pinner.finish(cid("cat"));
    pinner.fail(cid("dog"), new IllegalStateException("gone"));

    final PinningServiceEngine.Page all = engine.list(ALICE, filter(10));
    assertThat(all.count()).isEqualTo(3);
    assertThat(all.results()).extracting(PinStatusRecord::requestid)
        .containsExactly(cow.requestid(), dog.requestid(), cat.requestid());
    // The limit cuts the page, not the count.
    final PinningServiceEngine.Page one = engine.list(ALICE, filter(1));
    assertThat(one.count()).isEqualTo(3);
    assertThat(one.results()).extracting(PinStatusRecord::requestid)
        .containsExactly(cow.requestid());

    assertThat(engine.list(ALICE, byName("Cat picture", "exact")).results())
        .containsExactly(engine.get(ALICE, cat.requestid()).orElseThrow());
    assertThat(engine.list(ALICE, byName("cat PICTURE", "exact")).count()).isZero();
    assertThat(engine.list(ALICE, byName("cat PICTURE", "iexact")).count()).isEqualTo(1);
    assertThat(engine.list(ALICE, byName("pic", "partial")).count()).isEqualTo(1);
    assertThat(engine.list(ALICE, byName("VIDEO", "partial")).count()).isZero();
    assertThat(engine.list(ALICE, byName("VIDEO", "ipartial")).count()).isEqualTo(1);

    final PinningServiceEngine.Filter pinned = new PinningServiceEngine.Filter(Optional.empty(),
        Optional.empty(), "exact", Set.of(PinStatusRecord.PINNED, PinStatusRecord.FAILED),
        Optional.empty(), Optional.empty(), 10, Map.of());
    assertThat(engine.list(ALICE, pinned).results()).extracting(PinStatusRecord::requestid)
        .containsExactly(dog.requestid(), cat.requestid());

    final PinningServiceEngine.Filter byCid = new PinningServiceEngine.Filter(
        Optional.of(Set.of(cid("cow").toString(), cid("bobs").toString())), Optional.empty(),
        "exact", ALL_STATUSES, Optional.empty(), Optional.empty(), 10, Map.of());
    assertThat(engine.list(ALICE, byCid).results()).extracting(PinStatusRecord::requestid)
        .containsExactly(cow.requestid());

    // before and after are exclusive.
    final Instant dogCreated = Instant.parse(dog.created());
    final PinningServiceEngine.Filter window = new PinningServiceEngine.Filter(Optional.empty(),
        Optional.empty(), "exact", ALL_STATUSES, Optional.of(dogCreated.plusMillis(1)),
        Optional.of(dogCreated.minusMillis(1)), 10, Map.of());
    assertThat(engine.list(ALICE, window).results()).extracting(PinStatusRecord::requestid)
        .containsExactly(dog.requestid());
    final PinningServiceEngine.Filter exclusive = new PinningServiceEngine.Filter(
        Optional.empty(), Optional.empty(), "exact", ALL_STATUSES, Optional.of(dogCreated),
        Optional.empty(), 10, Map.of());
    assertThat(engine.list(ALICE, exclusive).results()).extracting(PinStatusRecord::requestid)
        .containsExactly(cat.requestid());

    final PinningServiceEngine.Filter meta = new PinningServiceEngine.Filter(Optional.empty(),
        Optional.empty(), "exact", ALL_STATUSES, Optional.empty(), Optional.empty(), 10,
        Map.of("app", "a", "kind", "image"));
    assertThat(engine.list(ALICE, meta).results()).extracting(PinStatusRecord::requestid)
        .containsExactly(cat.requestid());
    assertThat(engine.list(BOB, filter(10)).count()).isEqualTo(1);
  }

  @Test
  void add_shouldRefuseBadPins_with400_andAFullToken_with409() throws Exception {
    final PinningServiceEngine engine = engine(new PinningServiceEngine.Limits(2, 1, 8, 1, 4));
    final String cid = cid("x").toString();
    for (final PinStatusRecord.Pin bad : List.of(
        new PinStatusRecord.Pin(null, null, null, null),
        new PinStatusRecord.Pin("", null, null, null),
        new PinStatusRecord.Pin("not-a-cid", null, null, null),
        new PinStatusRecord.Pin(cid, "nine-char", null, null),
        new PinStatusRecord.Pin(cid, null, List.of(ORIGIN, ORIGIN), null),
        new PinStatusRecord.Pin(cid, null, List.of("not a multiaddr"), null),
        new PinStatusRecord.Pin(cid, null, null, Map.of("a", "1", "b", "2")),
        new PinStatusRecord.Pin(cid, null, null, Map.of("a", "12345")),
        new PinStatusRecord.Pin(cid, null, null, Map.of("long-key", "1")))) {
      assertThatThrownBy(() -> engine.add(ALICE, bad)).as(String.valueOf(bad))
          .isInstanceOfSatisfying(PinningServiceEngine.RequestException.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.reason()).isEqualTo("BAD_REQUEST");
          });
    }
    assertThat(pinner.asked).isEmpty();
    assertThat(datastore.scan(PinningServiceEngine.PREFIX)).isEmpty();

    engine.add(ALICE, new PinStatusRecord.Pin(cid, "eight-ch", List.of(ORIGIN),
        Map.of("a", "1234")));
    engine.add(ALICE, pin(cid("y")));
    assertThatThrownBy(() -> engine.add(ALICE, pin(cid("z"))))
        .isInstanceOfSatisfying(PinningServiceEngine.RequestException.class, e -> {
          assertThat(e.status()).isEqualTo(409);
          assertThat(e.reason()).isEqualTo("INSUFFICIENT_FUNDS");
        });
    assertThat(engine.counters()).containsEntry("quota", 1L);
    // The quota is per token.
    engine.add(BOB, pin(cid("z")));
    assertThat(pinner.asked).containsExactly(cid("x"), cid("y"), cid("z"));
  }

  @Test
  void load_shouldRestoreEveryRequest_andRestartOnlyTheUnfinishedOnes() throws Exception {
    final PinningServiceEngine before = engine();
    final PinStatusRecord done = before.add(ALICE, pin(cid("done")));
    final PinStatusRecord failed = before.add(ALICE, pin(cid("failed")));
    final PinStatusRecord running = before.add(BOB, pin(cid("running")));
    pinner.finish(cid("done"));
    pinner.fail(cid("failed"), new IllegalStateException("gone"));
    datastore.put(PinningServiceEngine.PREFIX + ALICE + "/garbage",
        "{not json".getBytes(StandardCharsets.UTF_8));
    pinner.asked.clear();
    pinner.running.clear();

    // A restart: a new engine on the same datastore.
    final PinningServiceEngine after = engine();
    after.load();

    assertThat(after.get(ALICE, done.requestid()).orElseThrow().status())
        .isEqualTo(PinStatusRecord.PINNED);
    assertThat(after.get(ALICE, failed.requestid()).orElseThrow().status())
        .isEqualTo(PinStatusRecord.FAILED);
    assertThat(after.get(BOB, running.requestid()).orElseThrow().status())
        .isEqualTo(PinStatusRecord.PINNING);
    assertThat(pinner.asked).containsExactly(cid("running"));
    assertThat(after.get(ALICE, done.requestid()).orElseThrow().created())
        .isEqualTo(done.created());

    pinner.finish(cid("running"));
    assertThat(after.get(BOB, running.requestid()).orElseThrow().status())
        .isEqualTo(PinStatusRecord.PINNED);
    assertThat(after.statusCounts()).containsOnly(Map.entry(PinStatusRecord.PINNED, 2),
        Map.entry(PinStatusRecord.FAILED, 1));
  }
}
