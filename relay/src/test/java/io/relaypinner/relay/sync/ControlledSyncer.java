package io.relaypinner.relay.sync;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link DatabaseSyncer} whose syncs block until the test releases their address; a released
 * address syncs at once from then on. Counts calls and records which syncs are in progress.
 */
final class ControlledSyncer implements DatabaseSyncer {
  private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
  private final Set<String> running = ConcurrentHashMap.newKeySet();
  private final Set<String> failing = ConcurrentHashMap.newKeySet();
  private final Set<String> interrupted = ConcurrentHashMap.newKeySet();
  private final Map<String, List<SyncTrigger>> triggers = new ConcurrentHashMap<>();

  @Override
  public SyncResult sync(final SyncContext context) throws Exception {
    final String address = context.address();
    triggers.computeIfAbsent(address, a -> new java.util.concurrent.CopyOnWriteArrayList<>())
        .add(context.trigger());
    calls.computeIfAbsent(address, a -> new AtomicInteger()).incrementAndGet();
    context.countOperation();
    running.add(address);
    try {
      gate(address).await();
    } catch (final InterruptedException e) {
      interrupted.add(address);
      throw e;
    } finally {
      running.remove(address);
    }
    if (failing.contains(address)) {
      throw new IllegalStateException("cannot open " + address);
    }
    return new SyncResult(address, 3, 3, 1, true, false,
        List.of("bafkmedia-" + calls(address)));
  }

  private CountDownLatch gate(final String address) {
    return gates.computeIfAbsent(address, a -> new CountDownLatch(1));
  }

  void release(final String address) {
    gate(address).countDown();
  }

  void fail(final String address) {
    failing.add(address);
  }

  boolean isRunning(final String address) {
    return running.contains(address);
  }

  boolean wasInterrupted(final String address) {
    return interrupted.contains(address);
  }

  /** The trigger of each sync of {@code address} so far, in order. */
  List<SyncTrigger> triggers(final String address) {
    return List.copyOf(triggers.getOrDefault(address, List.of()));
  }

  int calls(final String address) {
    final AtomicInteger count = calls.get(address);
    return count == null ? 0 : count.get();
  }
}
