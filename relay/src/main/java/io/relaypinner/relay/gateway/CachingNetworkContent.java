package io.relaypinner.relay.gateway;

import io.relaypinner.common.Failures;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.pin.DagWalker;
import io.relaypinner.ipfs.pin.LinkResolver;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.storage.GatewayCache;
import io.relaypinner.relay.storage.StorageGc;
import io.relaypinner.relay.storage.StorageQuota;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The network fallback's content, cached rather than pinned: what {@code delegate} fetched (or
 * found held) for a gateway request is admitted to the {@link GatewayCache} (as the most recently
 * used), and when that evicts blocks, garbage collection is asked to run. Before anything is
 * fetched the storage quota must leave room ({@code 507 storage_full} otherwise).
 *
 * <p>A DAG is admitted by walking it locally once it is complete (the blocks were just fetched or
 * read; at most {@code maxBlocks}). The delegate's DAG fetch should be capped at the cache budget,
 * so one request never needs more than the cache may keep.
 */
public final class CachingNetworkContent implements NetworkContent {
  private static final Logger LOG = LoggerFactory.getLogger(CachingNetworkContent.class);

  private final NetworkContent delegate;
  private final Blockstore blockstore;
  private final LinkResolver resolver;
  private final GatewayCache cache;
  private final StorageGc gc;
  private final StorageQuota quota;
  private final Executor storage;
  private final long maxBlocks;

  /**
   * @param storage runs the local walk (blocking reads); never an event loop
   * @param maxBlocks most blocks of one admitted DAG (as the delegate's fetch allows)
   */
  public CachingNetworkContent(final NetworkContent delegate, final Blockstore blockstore,
      final LinkResolver resolver, final StorageGc gc, final Executor storage,
      final long maxBlocks) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.gc = Objects.requireNonNull(gc, "gc");
    this.cache = gc.cache();
    this.quota = gc.quota();
    this.storage = Objects.requireNonNull(storage, "storage");
    this.maxBlocks = maxBlocks;
  }

  @Override
  public boolean hasPeers() {
    return delegate.hasPeers();
  }

  @Override
  public CompletableFuture<?> block(final Cid cid, final Duration timeout) {
    return roomFor(cid).thenCompose(ok -> delegate.block(cid, timeout))
        .thenApplyAsync(done -> {
          admit(List.of(cid), 1);
          return done;
        }, storage);
  }

  /**
   * Fetches the DAG, then admits what is held of it to the cache: all of it, or when the fetch
   * failed (a limit, the node-wide fallback total, the time) the blocks it stored before, so
   * that the cache's budget and its evictions bound them too instead of GC's grace period. The
   * root is held in the cache ({@link GatewayCache#hold}) until then.
   */
  @Override
  public CompletableFuture<?> dag(final Cid root, final Duration timeout) {
    // The root stays (cached or not) until the DAG is admitted: the admission walks from it.
    cache.hold(root.multihash());
    final CompletableFuture<?> admitted = roomFor(root).thenCompose(ok -> delegate.dag(root,
        timeout).handleAsync((done, failure) -> {
          admit(List.of(root), maxBlocks);
          if (failure != null) {
            throw new CompletionException(Failures.unwrap(failure));
          }
          return done;
        }, storage));
    admitted.whenComplete((done, failure) -> cache.release(root.multihash()));
    return admitted;
  }

  /**
   * Holds the DAG in the cache ({@link GatewayCache#holdDag}): GC keeps what is held of it, even
   * evicted, until the release runs (once).
   */
  @Override
  public Runnable holdDag(final Cid root) {
    cache.holdDag(root);
    final java.util.concurrent.atomic.AtomicBoolean released =
        new java.util.concurrent.atomic.AtomicBoolean();
    return () -> {
      if (released.compareAndSet(false, true)) {
        cache.releaseDag(root);
      }
    };
  }

  /** Fails at once when the quota is reached and {@code cid} is not held already. */
  private CompletableFuture<Void> roomFor(final Cid cid) {
    if (quota.full() && !Blocks.isIdentity(cid)) {
      return CompletableFuture.runAsync(() -> {
        if (!blockstore.has(cid)) {
          quota.checkRoom("gateway", 1);
        }
      }, storage);
    }
    return CompletableFuture.completedFuture(null);
  }

  /** Admits the blocks of the DAGs under {@code roots} that are held (their sizes as read). */
  private void admit(final List<Cid> roots, final long limit) {
    // Fetched blocks arrive staged (group commit): one barrier makes them durable and visible to
    // the quota's count and to garbage collection, which sweep only stored blocks.
    try {
      blockstore.sync();
    } catch (final RuntimeException e) {
      LOG.debug("cannot make the blocks of {} durable: {}", roots, e.toString());
      return;
    }
    final Map<Multihash, Integer> sizes = new HashMap<>();
    try {
      new DagWalker(recording(sizes), limit == 1 ? (cid, block) -> List.of() : resolver, limit)
          .walk(roots);
    } catch (final RuntimeException e) {
      // Not cached then: the blocks are unpinned and go at GC after its grace period.
      LOG.debug("cannot admit {} to the gateway cache: {}", roots, e.toString());
      return;
    }
    if (cache.admit(sizes)) {
      gc.requestRun();
    }
  }

  /** Reads through {@link #blockstore}, noting the size of every block read. */
  private Blockstore recording(final Map<Multihash, Integer> sizes) {
    return new Blockstore() {
      @Override
      public boolean has(final Cid cid) {
        return blockstore.has(cid);
      }

      @Override
      public Optional<byte[]> get(final Cid cid) {
        final Optional<byte[]> data = blockstore.get(cid);
        if (data.isPresent() && !Blocks.isIdentity(cid)) {
          sizes.put(cid.multihash(), data.get().length);
        }
        return data;
      }

      @Override
      public Optional<Integer> size(final Cid cid) {
        return blockstore.size(cid);
      }

      @Override
      public void put(final Cid cid, final byte[] data) {
        throw new UnsupportedOperationException("read-only");
      }

      @Override
      public boolean delete(final Cid cid) {
        throw new UnsupportedOperationException("read-only");
      }

      @Override
      public void forEachKey(final Consumer<Cid> visitor) {
        blockstore.forEachKey(visitor);
      }
    };
  }
}
