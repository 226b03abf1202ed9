package io.relaypinner.relay.coordination;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.relaypinner.common.Shutdown;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.stores.PostgresDatastore;
import io.relaypinner.stores.PostgresLeaseTable;
import io.relaypinner.stores.PostgresMediaWork;
import io.relaypinner.stores.PostgresNotifier;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Coordination} of the relays sharing one PostgreSQL (issue 24): database ownership and
 * the GC leadership on TTL leases ({@code relay_leases}, {@link LeaseKeeper} ticking on one
 * daemon thread), heads announcements with {@code NOTIFY relay_heads} (payload: the announcing
 * relay, with {@code :<lease epoch>} when it owns the database, the address, then as many head
 * CIDs as fit in {@value PostgresNotifier#MAX_PAYLOAD} characters), media pin work in {@code relay_media_work} ({@code SKIP LOCKED}).
 */
public final class PostgresCoordination {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresCoordination.class);

  /** The channel of heads announcements. */
  public static final String HEADS_CHANNEL = "relay_heads";
  /** The lease of the garbage-collection leader. */
  public static final String GC_LEADER = "relay-gc-leader";
  /** How long a lease lasts without renewal (renewed every third of it). */
  public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(6);

  private PostgresCoordination() {
  }

  /**
   * Starts the coordination of this relay ({@code holder}: its peer id) on {@code store}'s
   * database.
   *
   * @param mediaClaims media pins claimed at once at most (the pin concurrency)
   */
  public static Coordination start(final PostgresDatastore store, final String holder,
      final Duration leaseTtl, final int mediaClaims, final Clock clock) {
    final PostgresLeaseTable table = new PostgresLeaseTable(store, holder, leaseTtl);
    final LeaseKeeper keeper = new LeaseKeeper(leases(table), clock);
    keeper.want(GC_LEADER);
    final Announcer announcer = new Announcer(holder);
    final PostgresNotifier notifier = new PostgresNotifier(store, HEADS_CHANNEL,
        announcer::heard);
    announcer.notifier = notifier;
    final PostgresMediaWork work = new PostgresMediaWork(store, mediaClaims);
    final MediaWorkQueue media = (Cid cid) -> work.claim(cid.toString())
        .map(claim -> (MediaWorkQueue.Claim) claim::close);
    final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(
        new DefaultThreadFactory("relay-leases", true));
    final long period = keeper.tickPeriod().toMillis();
    ticker.scheduleWithFixedDelay(() -> {
      try {
        keeper.tick();
      } catch (final RuntimeException e) {
        LOG.warn("lease round failed: {}", e.toString());
      }
    }, 0, period, TimeUnit.MILLISECONDS);
    LOG.info("coordination: leases of {} ms in {}, heads on NOTIFY {}", leaseTtl.toMillis(),
        store.config().safeUrl(), HEADS_CHANNEL);
    return new Coordination(keeper, announcer, media, new GcLeaderPolicy(keeper,
        (fence, page) -> store.underFence(fence, () -> {
          page.run();
          return null;
        })), () -> {
      Shutdown.shutdownGracefully(ticker, Duration.ofSeconds(5), true, "lease ticker");
      notifier.close();
      for (final String name : keeper.owned()) {
        try {
          table.release(name);
        } catch (final StoreUnavailableException e) {
          break;
        }
      }
    });
  }

  /** {@code table} as the {@link LeaseKeeper}'s lease store. */
  static LeaseKeeper.Leases leases(final PostgresLeaseTable table) {
    return new LeaseKeeper.Leases() {
      @Override
      public Map<String, Long> tryAcquire(final Collection<String> names) {
        return table.tryAcquire(names);
      }

      @Override
      public Map<String, Long> renew(final Collection<String> names) {
        return table.renew(names);
      }

      @Override
      public String holder() {
        return table.holder();
      }

      @Override
      public void release(final String name) {
        table.release(name);
      }

      @Override
      public Duration ttl() {
        return table.ttl();
      }
    };
  }

  /**
   * Heads announcements over one notifier; its own payloads are ignored. The first word of a
   * payload is the announcing relay, followed by {@code :<epoch>} when it owns the database
   * (relays of an earlier version send the relay alone, epoch 0, and read {@code relay:epoch}
   * as a relay that is not them). An owner's announcement with an epoch lower than the highest
   * heard for that database comes from an owner that lost the lease since (it paused): dropped.
   * Announcements of relays that do not own the database (epoch 0) only add heads to join, so
   * they are never dropped.
   */
  static final class Announcer implements HeadsAnnouncer {
    /** Databases whose highest epoch is remembered (the least recently heard are forgotten). */
    static final int MAX_EPOCHS = LeaseKeeper.MAX_WANTED;

    private final String holder;
    private volatile PostgresNotifier notifier;
    private volatile BiConsumer<String, List<String>> listener = (a, h) -> { };
    private final Map<String, Long> highest = new LinkedHashMap<>(16, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(final Map.Entry<String, Long> eldest) {
        return size() > MAX_EPOCHS;
      }
    };
    private final AtomicLong stale = new AtomicLong();

    Announcer(final String holder) {
      this.holder = holder;
    }

    @Override
    public void announce(final String address, final List<String> heads, final long epoch) {
      final PostgresNotifier current = notifier;
      if (current == null) {
        return;
      }
      current.notify(payload(holder, epoch, address, heads));
    }

    static String payload(final String holder, final long epoch, final String address,
        final List<String> heads) {
      final StringBuilder out = new StringBuilder(holder);
      if (epoch > 0) {
        out.append(':').append(epoch);
      }
      out.append(' ').append(address);
      for (final String head : heads) {
        if (out.length() + 1 + head.length() > PostgresNotifier.MAX_PAYLOAD) {
          break;
        }
        out.append(' ').append(head);
      }
      if (out.length() > PostgresNotifier.MAX_PAYLOAD) {
        throw new IllegalArgumentException("address too long to announce");
      }
      return out.toString();
    }

    void heard(final String payload) {
      final String[] parts = payload.split(" ");
      if (parts.length < 2) {
        return;
      }
      final int colon = parts[0].indexOf(':');
      final String from = colon < 0 ? parts[0] : parts[0].substring(0, colon);
      if (from.equals(holder)) {
        return;
      }
      long epoch = 0;
      if (colon >= 0) {
        try {
          epoch = Long.parseLong(parts[0].substring(colon + 1));
        } catch (final NumberFormatException e) {
          return;
        }
      }
      if (epoch > 0 && !newest(parts[1], epoch)) {
        stale.incrementAndGet();
        LOG.debug("dropped heads of {} announced by {} at epoch {}: a later owner announced",
            parts[1], from, epoch);
        return;
      }
      final List<String> heads = new ArrayList<>();
      for (int i = 2; i < parts.length; i++) {
        heads.add(parts[i]);
      }
      listener.accept(parts[1], heads);
    }

    /** Remembers {@code epoch} for {@code address}; false when a higher one was heard. */
    private synchronized boolean newest(final String address, final long epoch) {
      final Long seen = highest.get(address);
      if (seen != null && seen > epoch) {
        return false;
      }
      highest.put(address, epoch);
      return true;
    }

    /** Announcements dropped as a former owner's since start. */
    long staleCount() {
      return stale.get();
    }

    @Override
    public void onAnnounced(final BiConsumer<String, List<String>> listener) {
      this.listener = listener;
    }
  }
}
