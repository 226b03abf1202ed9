package io.relaypinner.relay.node;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.Shutdown;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.GcScratch;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.config.StorageConfig;
import io.relaypinner.relay.config.StorageLimits;
import io.relaypinner.relay.coordination.Coordination;
import io.relaypinner.relay.coordination.PostgresCoordination;
import io.relaypinner.relay.storage.DurabilityMetrics;
import io.relaypinner.relay.storage.GatewayCache;
import io.relaypinner.relay.storage.GcPolicy;
import io.relaypinner.relay.storage.LogMembers;
import io.relaypinner.relay.storage.StorageGc;
import io.relaypinner.relay.storage.StorageMetrics;
import io.relaypinner.relay.storage.StorageQuota;
import io.relaypinner.relay.storage.StoreMetrics;
import io.relaypinner.stores.PostgresDatastore;
import io.relaypinner.stores.S3Blockstore;
import io.relaypinner.stores.StoreAvailability;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's storage: the block store and the datastore, the pins, the coordination with other
 * relays on shared stores, the storage executor, and the quota, the gateway cache and garbage
 * collection (docs/operators.md), and the embedded datastore's housekeeping
 * ({@link MvStoreDatastore#maintain}, on the GC thread). With shared stores a probe notices the
 * end of an outage.
 *
 * <p>Closing waits for running storage work without interrupting it first (see {@link #close()})
 * and closes the stores last.
 */
public final class StorageSubsystem extends Subsystem {
  private static final Logger LOG = LoggerFactory.getLogger(StorageSubsystem.class);
  /** Under {@code DATASTORE_PATH}: GC's scratch files (nothing durable). */
  public static final String GC_SCRATCH_DIR = "gc";

  private final Blockstore blockstore;
  /** Set when the blocks are flat files: the gateway serves raw blocks from them zero-copy. */
  private final FlatFsBlockstore flatBlocks;
  private final Datastore datastore;
  private final NodeTuning tuning;
  private final PinStore pins;
  private final Coordination coordination;
  private final ThreadPoolExecutor executor;
  /**
   * One thread: scheduled and pressure GC runs, never overlapping; datastore flushes and the
   * embedded datastore's maintenance.
   */
  private final ScheduledThreadPoolExecutor gcExecutor;
  /** Probes shared stores found down (null with the embedded stores). */
  private final ScheduledThreadPoolExecutor storeProbe;
  private final StorageGc gc;

  /**
   * Opens the configured stores: by default {@code <DATASTORE_PATH>/blocks} and
   * {@code <DATASTORE_PATH>/datastore.mv}, or the shared S3 bucket and PostgreSQL database
   * ({@link StoreUnavailableException} naming the one that cannot be reached). Local ones lock
   * their files: a second node on the same directory fails here.
   *
   * @param peerId this relay's peer id (its name among relays sharing the stores)
   * @param gcPolicy who may collect garbage; null: the coordination's
   */
  public static StorageSubsystem open(final StorageConfig config, final String peerId,
      final PrometheusRegistry registry, final Clock clock, final NodeTuning tuning,
      final GcPolicy gcPolicy) {
    final Path dir = config.dataDir();
    final Blockstore blockstore;
    if (config.s3().isPresent()) {
      blockstore = S3Blockstore.open(config.s3().get(), clock);
      LOG.info("blockstore: S3 {}", config.s3().get());
    } else {
      blockstore = new FlatFsBlockstore(dir.resolve("blocks"));
    }
    final Datastore datastore;
    try {
      datastore = config.postgres().isPresent()
          ? PostgresDatastore.open(config.postgres().get(), clock)
          : new MvStoreDatastore(dir.resolve("datastore.mv"));
    } catch (final RuntimeException e) {
      closeBlockstore(blockstore);
      throw e;
    }
    // GC's sets on the data directory's disk (not /tmp, which may be memory).
    return new StorageSubsystem(blockstore, datastore, config.limits(), peerId, registry, clock,
        tuning, gcPolicy, GcScratch.onDisk(dir.resolve(GC_SCRATCH_DIR)));
  }

  /**
   * Storage on these stores, which it closes with itself. The quota is enforced on flat files
   * only (S3 has no cheap byte count); shared coordination runs on a PostgreSQL datastore.
   *
   * @param gcPolicy who may collect garbage; null: the coordination's (always alone, the leader
   *     on shared stores)
   */
  public StorageSubsystem(final Blockstore blockstore, final Datastore datastore,
      final StorageLimits limits, final String peerId, final PrometheusRegistry registry,
      final Clock clock, final NodeTuning tuning, final GcPolicy gcPolicy) {
    this(blockstore, datastore, limits, peerId, registry, clock, tuning, gcPolicy,
        GcScratch.inHeap());
  }

  /**
   * As the constructor above, with GC's sets in {@code gcScratch} ({@link GcScratch#onDisk}:
   * a GC run's heap does not grow with the store).
   */
  public StorageSubsystem(final Blockstore blockstore, final Datastore datastore,
      final StorageLimits limits, final String peerId, final PrometheusRegistry registry,
      final Clock clock, final NodeTuning tuning, final GcPolicy gcPolicy,
      final GcScratch gcScratch) {
    Objects.requireNonNull(gcScratch, "gcScratch");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.datastore = Objects.requireNonNull(datastore, "datastore");
    this.flatBlocks = blockstore instanceof FlatFsBlockstore flat ? flat : null;
    this.tuning = Objects.requireNonNull(tuning, "tuning");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(peerId, "peerId");
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(clock, "clock");
    ScheduledThreadPoolExecutor probe = null;
    Coordination coordinated = Coordination.local();
    ThreadPoolExecutor storage = null;
    ScheduledThreadPoolExecutor collector = null;
    try {
      StoreMetrics.register(registry, blockstore, datastore);
      probe = startStoreProbe();
      DurabilityMetrics.register(registry, blockstore, datastore);
      pins = new PinStore(datastore, blockstore, CodecLinkResolver.standard(),
          PinStore.DEFAULT_MAX_PIN_BLOCKS, PinStore.DEFAULT_MAX_MARK_BLOCKS, gcScratch);
      // Pins recorded before pins had holders: held by legacy: from now on (nothing is lost;
      // a relay on shared stores that does not know holders yet keeps writing them, and they
      // stay GC roots until the next start migrates them).
      pins.migrateLegacy();
      if (datastore instanceof PostgresDatastore shared) {
        coordinated = PostgresCoordination.start(shared, peerId, tuning.leaseTtl(),
            tuning.replication().pinConcurrency(), clock);
      }
      storage = new ThreadPoolExecutor(tuning.storageThreads(), tuning.storageThreads(), 0,
          TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(tuning.storageQueue()),
          new DefaultThreadFactory("relay-storage", true), new ThreadPoolExecutor.AbortPolicy());
      collector = new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("relay-gc", true));
      gc = startStorageGc(collector, limits, registry, clock,
          gcPolicy != null ? gcPolicy : coordinated.gcPolicy(), gcScratch);
    } catch (final RuntimeException e) {
      for (final ExecutorService started : new ExecutorService[] {probe, storage, collector}) {
        if (started != null) {
          started.shutdownNow();
        }
      }
      coordinated.close();
      datastore.close();
      closeBlockstore(blockstore);
      throw e;
    }
    this.storeProbe = probe;
    this.coordination = coordinated;
    this.executor = storage;
    this.gcExecutor = collector;
  }

  /**
   * With shared stores: every second, a store found down is asked again (a cheap call), so the
   * end of an outage is noticed even when nothing else calls it, and what waits for it
   * ({@link #whenStoresRecover}) runs at once.
   */
  private ScheduledThreadPoolExecutor startStoreProbe() {
    final List<Runnable> probes = new ArrayList<>();
    if (blockstore instanceof S3Blockstore s3) {
      probes.add(() -> {
        if (!s3.availability().up()) {
          s3.probe();
        }
      });
    }
    if (datastore instanceof PostgresDatastore postgres) {
      probes.add(() -> {
        if (!postgres.availability().up()) {
          postgres.probe();
        }
      });
    }
    if (probes.isEmpty()) {
      return null;
    }
    final ScheduledThreadPoolExecutor probe = new ScheduledThreadPoolExecutor(1,
        new DefaultThreadFactory("relay-store-probe", true));
    probe.scheduleWithFixedDelay(() -> {
      for (final Runnable each : probes) {
        try {
          each.run();
        } catch (final StoreUnavailableException e) {
          // Still down: counted and logged (once per outage) by the store.
        }
      }
    }, 1, 1, TimeUnit.SECONDS);
    return probe;
  }

  /**
   * The quota ({@code RELAY_STORAGE_MAX_BYTES}, on flat files: S3 has no cheap byte count), the
   * gateway cache and GC: every {@code RELAY_GC_INTERVAL_MS} and under pressure.
   */
  private StorageGc startStorageGc(final ScheduledThreadPoolExecutor gcExecutor,
      final StorageLimits limits, final PrometheusRegistry registry, final Clock clock,
      final GcPolicy policy, final GcScratch scratch) {
    final FlatFsBlockstore flat = flatBlocks;
    if (flat == null && limits.maxBytes() > 0) {
      LOG.warn("RELAY_STORAGE_MAX_BYTES is not enforced with RELAY_BLOCKSTORE=s3: bound the"
          + " bucket with the provider's quota");
    }
    final StorageGc[] started = new StorageGc[1];
    final StorageQuota quota = new StorageQuota(flat == null ? 0 : limits.maxBytes(),
        flat == null ? () -> 0L : () -> flat.byteCount() + flat.stagedBytes(), () -> {
          final StorageGc current = started[0];
          if (current != null && !isClosed()) {
            current.requestRunUnderPressure();
          }
        });
    final StorageGc collector = new StorageGc(pins,
        GatewayCache.forHeap(limits.gatewayCacheMaxBytes(),
            Runtime.getRuntime().maxMemory()), quota, clock, limits.gcGrace(), policy,
        new LogMembers(datastore), scratch);
    gcExecutor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    collector.executeOn(gcExecutor);
    // Deferred datastore writes (replicated entries' pins) become durable within this period.
    final long flush = tuning.datastoreFlush().toMillis();
    gcExecutor.scheduleWithFixedDelay(this::flushDatastore, flush, flush, TimeUnit.MILLISECONDS);
    if (datastore instanceof MvStoreDatastore embedded) {
      // Without it the embedded store's file and chunk metadata (heap) grow for good.
      final long every = MvStoreDatastore.MAINTENANCE_INTERVAL.toMillis();
      gcExecutor.scheduleWithFixedDelay(() -> maintainDatastore(embedded), every, every,
          TimeUnit.MILLISECONDS);
    }
    if (!limits.gcInterval().isZero()) {
      gcExecutor.scheduleWithFixedDelay(collector::runOnce, limits.gcInterval().toMillis(),
          limits.gcInterval().toMillis(), TimeUnit.MILLISECONDS);
    }
    StorageMetrics.register(registry, collector);
    started[0] = collector;
    LOG.info("storage: quota {}, gateway cache {} bytes, GC every {} ms (grace {} ms)",
        quota.maxBytes() > 0 ? quota.maxBytes() + " bytes" : "none",
        limits.gatewayCacheMaxBytes(), limits.gcInterval().toMillis(),
        limits.gcGrace().toMillis());
    return collector;
  }

  /** Commits the datastore's deferred writes, if any (on the GC thread). */
  private void flushDatastore() {
    try {
      datastore.flush();
    } catch (final RuntimeException e) {
      LOG.warn("datastore flush failed: {}", e.toString());
    }
  }

  /**
   * One bounded round of the embedded datastore's housekeeping (on the GC thread, so never
   * during a GC run); a DEBUG line when it rewrote something (routine: on a busy relay every few
   * runs; the metrics count them), a WARN line when it failed.
   */
  private static void maintainDatastore(final MvStoreDatastore datastore) {
    try {
      final MvStoreDatastore.Maintenance run = datastore.maintain();
      if (run.rewrote()) {
        LOG.debug("datastore maintenance: file {} -> {} bytes, chunks {} -> {}, live {}% -> {}%,"
            + " {} ms", run.fileBytesBefore(), run.fileBytesAfter(), run.chunksBefore(),
            run.chunksAfter(), run.fillPercentBefore(), run.fillPercentAfter(), run.millis());
      }
    } catch (final RuntimeException e) {
      LOG.warn("datastore maintenance failed: {}", e.toString());
    }
  }

  /** Runs {@code action} each time an outage of a shared store ends. */
  public void whenStoresRecover(final Runnable action) {
    availability(blockstore).ifPresent(s3 -> s3.onRecovered(action));
    availability(datastore).ifPresent(postgres -> postgres.onRecovered(action));
  }

  /** The S3 bucket's availability; empty with flat files. */
  public Optional<StoreAvailability> blockstoreAvailability() {
    return availability(blockstore);
  }

  /** The PostgreSQL database's availability; empty with MVStore. */
  public Optional<StoreAvailability> datastoreAvailability() {
    return availability(datastore);
  }

  private static Optional<StoreAvailability> availability(final Object store) {
    if (store instanceof S3Blockstore s3) {
      return Optional.of(s3.availability());
    }
    if (store instanceof PostgresDatastore postgres) {
      return Optional.of(postgres.availability());
    }
    return Optional.empty();
  }

  /**
   * The block store.
   *
   * @throws IllegalStateException once closed
   */
  public Blockstore blockstore() {
    open();
    return blockstore;
  }

  /** The datastore (pins, sync history, topics, logs, pinning requests). */
  public Datastore datastore() {
    open();
    return datastore;
  }

  /**
   * The pins.
   *
   * @throws IllegalStateException once closed
   */
  public PinStore pins() {
    open();
    return pins;
  }

  /**
   * How this relay coordinates with others on shared stores (issue 24); its {@code gcPolicy()}
   * (the GC-leader lease there) guards {@link #gc()}. Local (owns everything, always collects)
   * with the embedded stores.
   */
  public Coordination coordination() {
    return coordination;
  }

  /** Blocking storage work (pin checks, block reads for /ipfs/), bounded: full means 503. */
  public ExecutorService executor() {
    return executor;
  }

  /**
   * Garbage collection, the quota and the gateway cache.
   *
   * @throws IllegalStateException once closed
   */
  public StorageGc gc() {
    if (isClosed()) {
      throw new IllegalStateException("relay node is not running");
    }
    return gc;
  }

  /**
   * The storage quota: the one place that refuses new content when full (blocks written,
   * fetches, pins, imports).
   */
  public StorageQuota quota() {
    return gc.quota();
  }

  /** {@code RELAY_STORAGE_MAX_BYTES} when one is enforced. */
  public Optional<Long> quotaBytes() {
    final long max = gc.quota().maxBytes();
    return max > 0 ? Optional.of(max) : Optional.empty();
  }

  /** A raw block's file for zero-copy serving; empty when blocks are not flat files. */
  public Optional<FileChannel> blockFile(final Cid cid) {
    final FlatFsBlockstore flat = flatBlocks;
    return flat != null ? flat.openChannel(cid) : Optional.empty();
  }

  private void open() {
    if (isClosed()) {
      throw new IllegalStateException("storage is not open");
    }
  }

  /** Ends the coordination with other relays (its leases), once the work using it stopped. */
  @Override
  protected void onStop() {
    coordination.close();
  }

  /**
   * Storage work ends (bounded wait), then the stores close. Running storage tasks are not
   * interrupted at first: an interrupt during a datastore write closes the store's file channel
   * (ClosedByInterruptException) for everyone, so the stores could not be closed cleanly. Only
   * work still running after the wait is interrupted.
   */
  @Override
  protected void onClose() {
    if (storeProbe != null) {
      Shutdown.shutdownGracefully(storeProbe, tuning.shutdownTimeout(), true, "store probe");
    }
    // No interrupt: a GC run reads the datastore, whose file channel an interrupt closes.
    if (Shutdown.shutdownGracefully(gcExecutor, tuning.shutdownTimeout(), false, "GC")) {
      // GC's scratch file goes with it (one a run still holds is deleted at the next start).
      gc.close();
    }
    Shutdown.shutdownGracefully(executor, tuning.shutdownTimeout(), false, "storage work");
    datastore.close();
    closeBlockstore(blockstore);
  }

  private static void closeBlockstore(final Blockstore blockstore) {
    if (blockstore instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (final Exception e) {
        LOG.warn("closing the blockstore failed: {}", e.toString());
      }
    }
  }
}
