package io.relaypinner.orbitdb.identity;

import static io.relaypinner.common.Failures.unwrap;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.EntryRejectedException;
import io.relaypinner.orbitdb.RejectReason;
import io.relaypinner.orbitdb.UnsupportedTypeException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Resolves the identity an entry names: the block from the local blockstore or the
 * {@link BlockFetcher}, decoded, verified ({@link IdentityVerifiers}) and cached by CID. It is
 * not stored here: the log stores it once an entry it signs passed every check, the access
 * controller included, so an anonymous peer cannot make this node store identity blocks. Results that depend only
 * on the block's content (valid, invalid, unknown type) are cached; fetch failures are not.
 *
 * <p>Thread-safe. Concurrent resolutions of one CID share one fetch.
 */
public final class Identities {
  /**
   * Default number of cached identities (the relay sizes its cache from its replication memory).
   * Least recently used first out: every writer of a local-first app is a new identity, and a
   * cache that only emptied when full (before issue 36) rose and fell with them; an identity read
   * again costs a block read and two signature checks.
   */
  public static final int DEFAULT_CACHE_SIZE = 10_000;

  private final Blockstore blockstore;
  private final BlockFetcher fetcher;
  private final IdentityVerifiers verifiers;
  private final Executor executor;
  /** Access-ordered, at most the cache size; guarded by itself. */
  private final Map<Cid, CompletableFuture<Identity>> cache;

  /**
   * @param executor runs decoding and signature checks (never a Netty event loop)
   */
  public Identities(final Blockstore blockstore, final BlockFetcher fetcher,
      final IdentityVerifiers verifiers, final Executor executor, final int cacheSize) {
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.fetcher = Objects.requireNonNull(fetcher, "fetcher");
    this.verifiers = Objects.requireNonNull(verifiers, "verifiers");
    this.executor = Objects.requireNonNull(executor, "executor");
    if (cacheSize < 1) {
      throw new IllegalArgumentException("cacheSize must be positive");
    }
    this.cache = new LinkedHashMap<>(64, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(final Map.Entry<Cid, CompletableFuture<Identity>> e) {
        return size() > cacheSize;
      }
    };
  }

  /**
   * The verified identity with this CID. Fails with {@link EntryRejectedException}:
   * {@link RejectReason#INVALID_IDENTITY} (malformed or bad signatures),
   * {@link RejectReason#UNKNOWN_IDENTITY_TYPE} (cause: {@link UnsupportedTypeException}) or
   * {@link RejectReason#IDENTITY_UNAVAILABLE} (the block could not be fetched).
   */
  public CompletableFuture<Identity> resolve(final Cid cid) {
    final CompletableFuture<Identity> created = new CompletableFuture<>();
    synchronized (cache) {
      final CompletableFuture<Identity> cached = cache.get(cid);
      if (cached != null) {
        return cached;
      }
      cache.put(cid, created);
    }
    load(cid).whenComplete((identity, error) -> {
      if (error == null) {
        created.complete(identity);
        return;
      }
      final Throwable cause = unwrap(error);
      if (cause instanceof EntryRejectedException rejected
          && rejected.reason() == RejectReason.IDENTITY_UNAVAILABLE) {
        synchronized (cache) {
          cache.remove(cid, created);
        }
      }
      created.completeExceptionally(cause);
    });
    return created;
  }

  private CompletableFuture<Identity> load(final Cid cid) {
    final CompletableFuture<byte[]> bytes;
    final var held = blockstore.get(cid);
    if (held.isPresent()) {
      bytes = CompletableFuture.completedFuture(held.get());
    } else {
      bytes = fetcher.fetch(cid).exceptionallyCompose(error -> CompletableFuture.failedFuture(
          new EntryRejectedException(RejectReason.IDENTITY_UNAVAILABLE,
              "identity " + cid + " could not be fetched: " + unwrap(error), unwrap(error))));
    }
    return bytes.thenApplyAsync(block -> {
      final Identity identity;
      try {
        identity = Identity.decode(cid, block);
      } catch (final BadPeerException e) {
        throw new EntryRejectedException(RejectReason.INVALID_IDENTITY, e.getMessage(), e);
      }
      try {
        verifiers.verify(identity);
      } catch (final UnsupportedTypeException e) {
        throw new EntryRejectedException(RejectReason.UNKNOWN_IDENTITY_TYPE, e.getMessage(), e);
      }
      // Not stored here: the log stores it once an entry it signs passes the access controller.
      return identity;
    }, executor);
  }

  /** The verifiers identities are checked with (entry signatures follow their type's rule). */
  public IdentityVerifiers verifiers() {
    return verifiers;
  }

  /** Drops every cached result. */
  public void clearCache() {
    synchronized (cache) {
      cache.clear();
    }
  }
}
