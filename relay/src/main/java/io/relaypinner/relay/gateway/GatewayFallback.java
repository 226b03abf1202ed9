package io.relaypinner.relay.gateway;

import io.netty.util.concurrent.Ticker;
import io.relaypinner.ipfs.unixfs.UnixFsException;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.config.GatewayConfig;
import io.relaypinner.relay.config.GatewayMode;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The gateway's network fallback (spec 4.6, {@code RELAY_IPFS_GATEWAY_MODE=pinned-first}), one for
 * the plain and the trustless answers of {@code /ipfs/}: what a request names and this node does
 * not hold is fetched from connected peers into the blockstore (unpinned: the
 * {@link NetworkContent} decides where it is kept, e.g. the gateway cache), and the route then
 * answers from the blockstore as it does for local content.
 *
 * <p>One rule for both routes: a path is resolved through UnixFS directories block by block,
 * each block the resolution misses fetched (at most {@link #MAX_PATH_FETCHES}: deep or hostile
 * DAGs), then what the answer needs of the path's target ({@link Need}) is fetched. The limits
 * of one DAG fetch are the {@link NetworkContent}'s (the gateway cache's budget), and all
 * requests' fetches together draw from one {@link FallbackTotal} of the same size (no room: 503
 * {@code fallback_busy}). One time limit,
 * {@code RELAY_IPFS_FALLBACK_TIMEOUT_MS}, bounds the whole, measured on the Netty {@link Ticker}
 * the caller passes: beyond it the fetch fails with a {@link java.util.concurrent.TimeoutException}
 * (504 {@code gateway_timeout}). With nobody to ask (no peer connected) nothing is fetched and the
 * route answers at once from what is here. Off in {@code pinned-only} mode or without a
 * {@link NetworkContent}.
 */
public final class GatewayFallback {
  /** Missing blocks one path resolution may fetch before it gives up (deep or hostile DAGs). */
  public static final int MAX_PATH_FETCHES = 256;

  /** What an answer needs present of the CID and path a request names. */
  public enum Need {
    /** The target's block (raw blocks; CARs of scope {@code block}). */
    BLOCK,
    /** Every block of the DAG under the target, whatever its codec (other CARs). */
    DAG,
    /**
     * A UnixFS file or directory and every block under it (plain answers): the CID itself is
     * resolved through UnixFS too, and nothing beyond its block is fetched when it is not UnixFS
     * (no plain answer could serve it).
     */
    UNIXFS
  }

  private final boolean enabled;
  private final Duration timeout;
  private final NetworkContent network;
  private final UnixFsReader reader;
  private final Executor storage;
  private final Ticker ticker;

  /**
   * @param network fetches what is not here; empty: the fallback is off, as in
   *     {@code pinned-only} mode
   * @param reader resolves paths through the blockstore the network fills
   * @param storage runs the resolutions (blocking reads); never an event loop
   * @param ticker measures the time limit (the node's Netty-side time)
   */
  public GatewayFallback(final GatewayConfig config, final Optional<NetworkContent> network,
      final UnixFsReader reader, final Executor storage, final Ticker ticker) {
    Objects.requireNonNull(config, "config");
    this.enabled = config.mode() == GatewayMode.PINNED_FIRST && network.isPresent();
    this.timeout = config.fallbackTimeout();
    this.network = network.orElse(null);
    this.reader = Objects.requireNonNull(reader, "reader");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
  }

  private GatewayFallback() {
    this.enabled = false;
    this.timeout = Duration.ZERO;
    this.network = null;
    this.reader = null;
    this.storage = null;
    this.ticker = null;
  }

  /** The fallback of {@code pinned-only} mode: never asks the network. */
  public static GatewayFallback off() {
    return new GatewayFallback();
  }

  /** Whether requests for content that is not here may go to the network. */
  public boolean enabled() {
    return enabled;
  }

  /** The time limit of one request's fetches ({@code RELAY_IPFS_FALLBACK_TIMEOUT_MS}). */
  public Duration timeout() {
    return timeout;
  }

  /**
   * Keeps what is held of the DAG under {@code root} (the request's CID: its path and target
   * included) from garbage collection until the returned release runs (once): for a response
   * that streams content the fallback fetched or found cached, taken before the fetch and
   * released when the body ends, fails or is discarded. Holds nothing when the fallback is off.
   */
  public Runnable holdDag(final Cid root) {
    return network == null ? () -> { } : network.holdDag(root);
  }

  /**
   * Completes once what {@code cid} and {@code path} name is as present as the network can make
   * it for {@code need}: at once when the fallback is off or no peer can be asked; when the path
   * does not resolve for a reason other than a missing block, with only the blocks fetched up to
   * there (the route's answer then says what is wrong). Fails with a
   * {@link java.util.concurrent.TimeoutException} past {@link #timeout()}, or with what the
   * network failed with (a DAG over its limits, a full quota).
   *
   * @param path the path inside {@code cid}, decoded; empty for the CID itself
   */
  public CompletableFuture<Void> fetch(final Cid cid, final String path, final Need need) {
    if (!enabled || !network.hasPeers()) {
      // Nobody to ask: what is here is all there is.
      return CompletableFuture.completedFuture(null);
    }
    final long deadline = ticker.nanoTime() + timeout.toNanos();
    final CompletableFuture<Cid> target = path.isEmpty() && need != Need.UNIXFS
        ? CompletableFuture.completedFuture(cid)
        : resolveFetching(cid, path, deadline, 0);
    return target.thenCompose(found -> {
      if (found == null) {
        return CompletableFuture.completedFuture(null);
      }
      final CompletableFuture<?> fetched = need == Need.BLOCK
          ? network.block(found, remaining(deadline))
          : network.dag(found, remaining(deadline));
      return fetched.thenApply(done -> null);
    });
  }

  /**
   * The CID of what {@code path} names under {@code cid}, fetching the blocks the resolution
   * misses; null when the resolution fails for another reason or takes too many fetches.
   */
  private CompletableFuture<Cid> resolveFetching(final Cid cid, final String path,
      final long deadline, final int fetches) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return new Resolution(reader.resolve(cid, path).cid(), null);
      } catch (final UnixFsException e) {
        if (e.reason() == UnixFsException.Reason.MISSING_BLOCK && e.cid().isPresent()) {
          return new Resolution(null, e.cid().get());
        }
        return new Resolution(null, null);
      }
    }, storage).thenCompose(resolution -> {
      if (resolution.missing() == null) {
        return CompletableFuture.completedFuture(resolution.target());
      }
      if (fetches >= MAX_PATH_FETCHES) {
        return CompletableFuture.completedFuture(null);
      }
      return network.block(resolution.missing(), remaining(deadline))
          .thenCompose(done -> resolveFetching(cid, path, deadline, fetches + 1));
    });
  }

  private record Resolution(Cid target, Cid missing) {}

  /** What is left of the time limit; never zero (a zero timeout may mean none). */
  private Duration remaining(final long deadline) {
    return Duration.ofNanos(Math.max(1, deadline - ticker.nanoTime()));
  }
}
