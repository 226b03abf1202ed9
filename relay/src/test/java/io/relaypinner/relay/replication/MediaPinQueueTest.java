package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class MediaPinQueueTest {
  private static final PinHolder DB = PinHolder.of("replication", "/orbitdb/zdpuA");
  private static final PinHolder OTHER_DB = PinHolder.of("replication", "/orbitdb/zdpuB");
  private final List<Cid> started = new CopyOnWriteArrayList<>();
  private final Map<Cid, CompletableFuture<Object>> running = new ConcurrentHashMap<>();

  private static Cid cid(final String seed) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(seed.getBytes(StandardCharsets.UTF_8)));
  }

  private CompletableFuture<?> pin(final Cid cid, final PinHolder holder) {
    started.add(cid);
    return running.computeIfAbsent(cid, k -> new CompletableFuture<>());
  }

  @Test
  void pin_shouldFailAndForgetTheCid_whenThePinnedCheckThrows() throws Exception {
    final AtomicBoolean broken = new AtomicBoolean(true);
    final MediaPinQueue queue = new MediaPinQueue(this::pin, (cid, holder) -> {
      if (broken.get()) {
        throw new IllegalStateException("datastore unreadable");
      }
      return false;
    }, Runnable::run, 1);
    final Cid media = cid("a");

    assertThatThrownBy(() -> queue.pin(media, DB).get(1, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class);
    assertThat(queue.inFlight()).isZero();

    // Not wedged: the next attempt pins.
    broken.set(false);
    final CompletableFuture<Cid> again = queue.pin(media, DB);
    running.get(media).complete(null);
    assertThat(again.get(1, TimeUnit.SECONDS)).isEqualTo(media);
  }

  @Test
  void pin_shouldStartEachCidOnce_andTheNextOnlyWhenOneFinishes() throws Exception {
    final MediaPinQueue queue = new MediaPinQueue(this::pin, (cid, holder) -> false, Runnable::run, 1);
    final Cid a = cid("a");
    final Cid b = cid("b");
    final Cid c = cid("c");
    final CompletableFuture<Cid> first = queue.pin(a, DB);
    assertThat(queue.pin(a, DB)).isSameAs(first);
    queue.pin(b, DB);
    queue.pin(c, DB);
    assertThat(started).containsExactly(a);

    running.get(a).complete(null);
    assertThat(first.get(1, TimeUnit.SECONDS)).isEqualTo(a);
    // One finished pin starts one waiting pin: no pass over everything queued.
    assertThat(started).containsExactly(a, b);
    running.get(b).complete(null);
    running.get(c).complete(null);
    assertThat(started).containsExactly(a, b, c);
    assertThat(queue.pinnedCount()).isEqualTo(3);
  }

  @Test
  void pin_shouldFail_whenTheStorageExecutorRejects() {
    final MediaPinQueue queue = new MediaPinQueue(this::pin, (cid, holder) -> false, task -> {
      throw new RejectedExecutionException("full");
    }, 1);

    assertThat(queue.pin(cid("a"), DB)).isCompletedExceptionally();
    assertThat(queue.inFlight()).isZero();
    assertThat(queue.failedCount()).isEqualTo(1);
  }

  @Test
  void sharedPins_areClaimedAroundThePin_andOneAnotherRelayPinsWaitsWithoutHoldingASlot()
      throws Exception {
    final java.util.Set<Cid> pinnedElsewhere = ConcurrentHashMap.newKeySet();
    final MediaPinQueue queue =
        new MediaPinQueue(this::pin, (cid, holder) -> pinnedElsewhere.contains(cid),
            Runnable::run, 1);
    final Cid a = cid("a");
    final Cid b = cid("b");
    final Map<Cid, Boolean> closed = new ConcurrentHashMap<>();
    queue.shareWith(cid -> cid.equals(a) ? java.util.Optional.empty()
        : java.util.Optional.of(done -> closed.put(cid, done)));

    final CompletableFuture<Cid> first = queue.pin(a, DB);
    final CompletableFuture<Cid> second = queue.pin(b, DB);
    // Another relay holds a's claim: a gives its turn up, b runs.
    assertThat(started).containsExactly(b);
    assertThat(queue.busyCount()).isEqualTo(1);
    running.get(b).complete(null);
    assertThat(second.get(1, TimeUnit.SECONDS)).isEqualTo(b);
    assertThat(closed).containsEntry(b, true);

    // The other relay's pin lands in the shared pins: a later look completes a, no fetch here.
    pinnedElsewhere.add(a);
    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(a);
    assertThat(started).containsExactly(b);
    assertThat(queue.inFlight()).isZero();
  }

  @Test
  void pin_shouldAddEveryDatabasesHold_toOneFetch_andHoldAMediaPinnedAlready() throws Exception {
    final Map<Cid, java.util.Set<PinHolder>> holds = new ConcurrentHashMap<>();
    final MediaPinQueue queue = new MediaPinQueue((cid, holder) -> {
      started.add(cid);
      return running.computeIfAbsent(cid, k -> new CompletableFuture<>())
          .thenRun(() -> holds.computeIfAbsent(cid, k -> ConcurrentHashMap.newKeySet())
              .add(holder));
    }, (cid, holder) -> {
      final java.util.Set<PinHolder> holders = holds.get(cid);
      if (holders == null || holders.isEmpty()) {
        return false;
      }
      holders.add(holder);
      return true;
    }, Runnable::run, 2);
    final Cid media = cid("media");

    final CompletableFuture<Cid> first = queue.pin(media, DB);
    assertThat(queue.pin(media, DB)).isSameAs(first);
    final CompletableFuture<Cid> second = queue.pin(media, OTHER_DB);
    running.get(media).complete(null);

    assertThat(first.get(1, TimeUnit.SECONDS)).isEqualTo(media);
    assertThat(second.get(1, TimeUnit.SECONDS)).isEqualTo(media);
    assertThat(started).containsExactly(media);
    assertThat(holds.get(media)).containsExactlyInAnyOrder(DB, OTHER_DB);

    // Pinned already (by a /pins request, say): a third database only adds its hold, no fetch.
    final PinHolder third = PinHolder.of("replication", "/orbitdb/zdpuC");
    assertThat(queue.pin(media, third).get(1, TimeUnit.SECONDS)).isEqualTo(media);
    assertThat(started).containsExactly(media);
    assertThat(holds.get(media)).contains(third);
  }
}
