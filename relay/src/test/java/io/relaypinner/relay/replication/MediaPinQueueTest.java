package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
  private final List<Cid> started = new CopyOnWriteArrayList<>();
  private final Map<Cid, CompletableFuture<Object>> running = new ConcurrentHashMap<>();

  private static Cid cid(final String seed) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(seed.getBytes(StandardCharsets.UTF_8)));
  }

  private CompletableFuture<?> pin(final Cid cid) {
    started.add(cid);
    return running.computeIfAbsent(cid, k -> new CompletableFuture<>());
  }

  @Test
  void pin_shouldFailAndForgetTheCid_whenThePinnedCheckThrows() throws Exception {
    final AtomicBoolean broken = new AtomicBoolean(true);
    final MediaPinQueue queue = new MediaPinQueue(this::pin, cid -> {
      if (broken.get()) {
        throw new IllegalStateException("datastore unreadable");
      }
      return false;
    }, Runnable::run, 1);
    final Cid media = cid("a");

    assertThatThrownBy(() -> queue.pin(media).get(1, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class);
    assertThat(queue.inFlight()).isZero();

    // Not wedged: the next attempt pins.
    broken.set(false);
    final CompletableFuture<Cid> again = queue.pin(media);
    running.get(media).complete(null);
    assertThat(again.get(1, TimeUnit.SECONDS)).isEqualTo(media);
  }

  @Test
  void pin_shouldStartEachCidOnce_andTheNextOnlyWhenOneFinishes() throws Exception {
    final MediaPinQueue queue = new MediaPinQueue(this::pin, cid -> false, Runnable::run, 1);
    final Cid a = cid("a");
    final Cid b = cid("b");
    final Cid c = cid("c");
    final CompletableFuture<Cid> first = queue.pin(a);
    assertThat(queue.pin(a)).isSameAs(first);
    queue.pin(b);
    queue.pin(c);
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
    final MediaPinQueue queue = new MediaPinQueue(this::pin, cid -> false, task -> {
      throw new RejectedExecutionException("full");
    }, 1);

    assertThat(queue.pin(cid("a"))).isCompletedExceptionally();
    assertThat(queue.inFlight()).isZero();
    assertThat(queue.failedCount()).isEqualTo(1);
  }

  @Test
  void sharedPins_areClaimedAroundThePin_andOneAnotherRelayPinsWaitsWithoutHoldingASlot()
      throws Exception {
    final java.util.Set<Cid> pinnedElsewhere = ConcurrentHashMap.newKeySet();
    final MediaPinQueue queue =
        new MediaPinQueue(this::pin, pinnedElsewhere::contains, Runnable::run, 1);
    final Cid a = cid("a");
    final Cid b = cid("b");
    final Map<Cid, Boolean> closed = new ConcurrentHashMap<>();
    queue.shareWith(cid -> cid.equals(a) ? java.util.Optional.empty()
        : java.util.Optional.of(done -> closed.put(cid, done)));

    final CompletableFuture<Cid> first = queue.pin(a);
    final CompletableFuture<Cid> second = queue.pin(b);
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
}
