package io.relaypinner.relay.node;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.Shutdown;
import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.bitswap.BitswapMetrics;
import io.relaypinner.relay.bitswap.BitswapNetworkContent;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.gateway.CachingNetworkContent;
import io.relaypinner.relay.gateway.FallbackTotal;
import io.relaypinner.relay.gateway.NetworkContent;
import io.relaypinner.relay.pinsvc.PinningServiceEngine;
import io.relaypinner.relay.pinsvc.PinningServiceMetrics;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Content from the network: bitswap on the host (serving the blockstore to peers, fetching for
 * pins, the gateway and replication) on its own bounded executor, the one {@link NetworkPinner}
 * that media pins, the Pinning Service API and the gateway fallback share, the gateway's network
 * fallback, and the Pinning Service API's state.
 */
public final class ContentSubsystem extends Subsystem {
  private static final Logger LOG = LoggerFactory.getLogger(ContentSubsystem.class);

  private final StorageSubsystem storage;
  private final Host host;
  private final PrometheusRegistry registry;
  private final Clock clock;
  private final NodeTuning tuning;
  private final NodeBudget budget;
  /** Bitswap's own blockstore threads, so peers' wants never crowd out the gateway's reads. */
  private final ThreadPoolExecutor executor;
  private final Bitswap bitswap;
  private final NetworkPinner pinner;
  private Optional<NetworkContent> gatewayContent;
  private FallbackTotal fallbackTotal;
  private volatile PinningServiceEngine pinningService;

  /** As the node's, with a budget of its own sized from this JVM (tests). */
  public ContentSubsystem(final StorageSubsystem storage, final Host host,
      final PrometheusRegistry registry, final Clock clock, final NodeTuning tuning) {
    this(storage, host, registry, clock, tuning, NodeBudget.ofThisJvm(RelayConfig.DEFAULT));
  }

  /**
   * Starts bitswap on {@code host}, serving and filling {@code storage}; the gateway fallback
   * takes its bytes in flight from {@code budget}.
   */
  public ContentSubsystem(final StorageSubsystem storage, final Host host,
      final PrometheusRegistry registry, final Clock clock, final NodeTuning tuning,
      final NodeBudget budget) {
    this.budget = Objects.requireNonNull(budget, "budget");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.host = Objects.requireNonNull(host, "host");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.tuning = Objects.requireNonNull(tuning, "tuning");
    executor = new ThreadPoolExecutor(tuning.storageThreads(), tuning.storageThreads(), 0,
        TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(4 * tuning.storageQueue()),
        new DefaultThreadFactory("relay-bitswap", true), new ThreadPoolExecutor.AbortPolicy());
    try {
      // Blocks bitswap stores are pins' and gateway fetches': the quota refuses new ones when
      // full.
      bitswap = Bitswap.start(host, storage.quota().guard(storage.blockstore(), "bitswap"),
          executor, tuning.bitswap(), clock);
      BitswapMetrics.register(registry, bitswap);
    } catch (final RuntimeException e) {
      executor.shutdownNow();
      throw e;
    }
    // Media pins (the pinned-already check, each fetched block's links, the final pin) run on
    // the bitswap executor, next to the block writes they wait for.
    pinner = new NetworkPinner(bitswap, storage.pins(), CodecLinkResolver.standard(), executor);
  }

  /** Bitswap. */
  public Bitswap bitswap() {
    return bitswap;
  }

  /** The one network pinner: fetches a DAG over bitswap and pins it. */
  public NetworkPinner pinner() {
    return pinner;
  }

  /** Bitswap's blockstore executor (media pins run there too). */
  public ExecutorService executor() {
    return executor;
  }

  /**
   * The gateway's network fallback: bitswap fetches capped at the cache budget, cached (not
   * pinned) in the gateway cache; none when {@code RELAY_GATEWAY_CACHE_MAX_BYTES=0}. Made on the
   * first call.
   */
  public synchronized Optional<NetworkContent> gatewayContent() {
    if (gatewayContent == null) {
      final long cacheBytes = storage.gc().cache().maxBytes();
      if (cacheBytes == 0) {
        LOG.info("/ipfs/ network fallback off (RELAY_GATEWAY_CACHE_MAX_BYTES=0)");
        gatewayContent = Optional.empty();
      } else {
        // All fallback fetches in flight together hold at most the cache's budget (issue 36:
        // a cap per request let N concurrent requests store N times it).
        final FallbackTotal total = new FallbackTotal(budget.gatewayFallback(cacheBytes));
        fallbackTotal = total;
        GaugeWithCallback.builder()
            .name("relay_ipfs_fallback_bytes_in_flight")
            .help("Bytes the /ipfs/ network fallback has in flight, all requests together "
                + "(at most RELAY_GATEWAY_CACHE_MAX_BYTES)")
            .callback(callback -> callback.call(total.inFlight()))
            .register(registry);
        final BitswapNetworkContent fetcher =
            new BitswapNetworkContent(bitswap, pinner, cacheBytes, total);
        gatewayContent = Optional.of(new CachingNetworkContent(fetcher, storage.blockstore(),
            CodecLinkResolver.standard(), storage.gc(), storage.executor(),
            BitswapNetworkContent.MAX_BLOCKS));
      }
    }
    return gatewayContent;
  }

  /**
   * The node-wide total of the gateway fallback's bytes in flight; empty while the fallback is
   * off or not made yet ({@link #gatewayContent()}).
   */
  public synchronized Optional<FallbackTotal> fallbackTotal() {
    return Optional.ofNullable(fallbackTotal);
  }

  /**
   * Starts the Pinning Service API's state (once; later calls return it): requests from the
   * datastore, unfinished ones restarted; pins dial the request's origins, then fetch over
   * bitswap and pin ({@link ServicePinner}).
   *
   * @param delegates the relay's addresses, offered to clients as delegates
   * @param dialable which origins of a request the relay dials
   * @param json the API's JSON mapper
   */
  public synchronized PinningServiceEngine startPinningService(
      final Supplier<List<String>> delegates, final Predicate<Multiaddr> dialable,
      final ObjectMapper json) {
    if (pinningService == null) {
      final PinningServiceEngine engine = new PinningServiceEngine(storage.datastore(), clock,
          new ServicePinner(host, pinner, tuning.networkPinner(), storage.pins(),
              storage.quota(), dialable),
          delegates, tuning.pinningService(), json);
      engine.load();
      PinningServiceMetrics.register(registry, engine);
      pinningService = engine;
    }
    return pinningService;
  }

  /** The Pinning Service API's state, once started (with HTTP). */
  public Optional<PinningServiceEngine> pinningService() {
    return Optional.ofNullable(pinningService);
  }

  /** Closes bitswap (its protocol and wants). */
  @Override
  protected void onStop() {
    bitswap.close();
  }

  /** After {@link #stop()}: bitswap's executor, interrupting what still runs. */
  @Override
  protected void onClose() {
    Shutdown.shutdownGracefully(executor, tuning.shutdownTimeout(), true, "bitswap executor");
  }
}
