package io.relaypinner.libp2p.stream;

import io.netty.channel.Channel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostListener;
import io.relaypinner.libp2p.host.PeerBanEngine;
import io.relaypinner.libp2p.host.PeerInboundQueue;
import io.relaypinner.libp2p.protocol.identify.IdentifyResult;
import io.relaypinner.multiformats.PeerId;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Binds a protocol in which each peer talks to us on a stream of its own and hears from us on
 * ours (gossipsub, libp2p/specs pubsub/gossipsub-v1.0.md; bitswap, ipfs/specs
 * bitswap-protocol.md) to a {@link Host}: the glue such a protocol needs around its engine,
 * written once. jvm-libp2p splits a protocol into a binding (ids and the stream initializer) and
 * handlers; this is our binding for the long-lived, per-peer kind.
 *
 * <ul>
 *   <li><b>Ids and inbound streams.</b> {@link #start} registers every id of {@link
 *       PeerStreams.Options#protocolIds()}; a peer's stream to us gets the {@link Owner}'s
 *       handlers, which hand each decoded message to {@link #deliver}: admitted to the peer's
 *       {@link PeerInboundQueue} (its streams stop being read while the queue is full), handled
 *       on the loop, and a message the engine refuses is reported as the peer's fault.
 *   <li><b>Which peers speak it.</b> {@link Owner#peerSpeaks} when identify lists one of the ids,
 *       when the peer opens a stream to us, and at start for peers connected and identified
 *       already; {@link Owner#peerGone} when its last connection closed (our stream to it is gone
 *       then).
 *   <li><b>Our streams.</b> One {@link PeerStreams} per binding, on the binding's loop.
 *   <li><b>The loop.</b> One event loop of the host runs the owner's engine. {@link #onLoop},
 *       {@link #later}, {@link #every} and {@link #call} hand work to it from any thread; what a
 *       task throws is logged (or fails the call's future), never lost silently. After {@link
 *       #close} the tasks of the first three are skipped; {@link #onLoopAlways} and calls still
 *       run (a pending turn must release its slot, a get must fail).
 *   <li><b>Close.</b> Unregisters the ids, stops the timers, closes our streams, then {@link
 *       Owner#closed}.
 * </ul>
 *
 * <p>Thread-safe: every public method but {@link #streams()}'s use may be called from any thread
 * and does not block.
 *
 * @param <M> the owner's outbound message type
 */
public final class ProtocolBinding<M> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ProtocolBinding.class);

  /** What the protocol that owns the binding does; called on the loop unless said otherwise. */
  public interface Owner {
    /**
     * Adds the handlers of a peer's stream to us (on the stream's event loop, the moment the
     * protocol is negotiated); decoded messages go to {@link ProtocolBinding#deliver}.
     */
    void installInbound(Channel stream, String protocol, Connection connection);

    /** {@code peer}, connected, speaks the protocol (it may have been said before). */
    void peerSpeaks(PeerId peer);

    /** The last connection to {@code peer} closed; our stream to it is gone already. */
    void peerGone(PeerId peer);

    /** Runs after every task of the binding's (views of the engine's state refresh here). */
    default void afterTask() {}

    /** Runs once, after {@link ProtocolBinding#close}, once our streams are closed. */
    default void closed() {}
  }

  private final Host host;
  private final String name;
  private final List<String> protocolIds;
  private final EventExecutor loop;
  private final PeerStreams<M> streams;
  private final Owner owner;
  private final List<ScheduledFuture<?>> timers = new CopyOnWriteArrayList<>();
  private volatile boolean closed;

  /**
   * @param options our streams' options; its name is the protocol's in logs and its ids are the
   *     ones registered
   */
  public ProtocolBinding(final Host host, final PeerStreams.Options options,
      final PeerStreams.Policy<M> policy, final PeerStreams.Events<M> events,
      final Owner owner) {
    this.host = host;
    this.name = options.name();
    this.protocolIds = options.protocolIds();
    this.loop = host.eventLoops().group().next();
    this.streams = new PeerStreams<>(host, loop, options, policy, events);
    this.owner = owner;
  }

  /**
   * Registers the protocol ids on the host and starts following its peers: those connected and
   * identified already are told to the owner at once.
   */
  public void start() {
    for (final String id : protocolIds) {
      host.protocols().register(id, this::installInbound);
    }
    host.addListener(new HostListener() {
      @Override
      public void peerIdentified(final Connection connection, final IdentifyResult result) {
        if (protocolIds.stream().anyMatch(result::supports)) {
          speaks(connection.remotePeer());
        }
      }

      @Override
      public void connectionClosed(final Connection connection) {
        onLoop(() -> connectionGone(connection.remotePeer()));
      }
    });
    for (final Connection connection : host.connections()) {
      final boolean speaks = host.peerStore().get(connection.remotePeer())
          .map(info -> info.protocols().stream().anyMatch(protocolIds::contains))
          .orElse(false);
      if (speaks) {
        speaks(connection.remotePeer());
      }
    }
  }

  private void installInbound(final Channel stream, final String protocol) {
    final Connection connection = Connection.of(stream).orElseThrow();
    owner.installInbound(stream, protocol, connection);
    // A peer that talks the protocol to us speaks it (and, as JS does, gets our stream back).
    speaks(connection.remotePeer());
  }

  private void speaks(final PeerId peer) {
    onLoop(() -> owner.peerSpeaks(peer));
  }

  private void connectionGone(final PeerId peer) {
    if (host.connection(peer).isPresent()) {
      // Another connection to the peer lives; a stream on the closed one reopens itself.
      return;
    }
    streams.remove(peer);
    owner.peerGone(peer);
  }

  /** The loop the owner's engine runs on. */
  public EventExecutor loop() {
    return loop;
  }

  /** Our streams to the peers; use them on the loop only. */
  public PeerStreams<M> streams() {
    return streams;
  }

  public boolean isClosed() {
    return closed;
  }

  /**
   * Hands a message a peer sent on {@code stream} to {@code handle} on the loop, within the
   * peer's inbound budget. Call it from the stream's handler, on the stream's event loop.
   *
   * @param size what the message counts for in the peer's {@link PeerInboundQueue}
   * @param handle handles the message; false when the message broke a bound of the protocol's
   *     (reported as the peer's fault). Not called once the binding is closed.
   */
  public void deliver(final Connection connection, final Channel stream, final long size,
      final BooleanSupplier handle) {
    // Flow control: the peer's streams stop reading (so yamux stops granting window) while its
    // budget of decoded messages waiting, over all its streams and protocols, is full.
    final Runnable release = connection.inboundQueue().admit(stream, size);
    if (closed || !execute(() -> {
      try {
        if (!closed && !handle.getAsBoolean()) {
          connection.reportFault(PeerBanEngine.Fault.PROTOCOL_BOUND);
        }
      } finally {
        release.run();
      }
    })) {
      release.run();
    }
  }

  /** Runs {@code task} on the loop unless the binding is closed (then or by the time it runs). */
  public void onLoop(final Runnable task) {
    if (!closed) {
      execute(() -> runIfOpen(task));
    }
  }

  /** Runs {@code task} on the loop, also after {@link #close} (events that must not be lost). */
  public void onLoopAlways(final Runnable task) {
    execute(task);
  }

  /** Runs {@code task} on the loop after {@code delay}, unless the binding is closed by then. */
  public void later(final Duration delay, final Runnable task) {
    try {
      loop.schedule(() -> guarded(() -> runIfOpen(task)), delay.toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (final RejectedExecutionException e) {
      LOG.debug("{}: event loop gone", name);
    }
  }

  /**
   * Runs {@code task} on the loop after {@code initialDelay}, then every {@code period}, until
   * {@link #close}.
   */
  public void every(final Duration initialDelay, final Duration period, final Runnable task) {
    timers.add(loop.scheduleAtFixedRate(() -> guarded(() -> runIfOpen(task)),
        initialDelay.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS));
  }

  /**
   * Reads or changes the engine on the loop: completes with what {@code task} returns, or
   * exceptionally with what it threw (or when the loop is gone). Runs also after close.
   */
  public <T> CompletableFuture<T> call(final Supplier<T> task) {
    final CompletableFuture<T> result = new CompletableFuture<>();
    try {
      loop.execute(() -> {
        final T value;
        try {
          value = task.get();
        } catch (final RuntimeException e) {
          owner.afterTask();
          result.completeExceptionally(e);
          return;
        }
        owner.afterTask();
        result.complete(value);
      });
    } catch (final RejectedExecutionException e) {
      result.completeExceptionally(e);
    }
    return result;
  }

  /** Unregisters the protocol ids, stops the timers and closes our streams. */
  @Override
  public void close() {
    closed = true;
    for (final String id : protocolIds) {
      host.protocols().unregister(id);
    }
    onLoopAlways(() -> {
      for (final ScheduledFuture<?> timer : timers) {
        timer.cancel(false);
      }
      streams.closeAll();
      owner.closed();
    });
  }

  // ------------------------------------------------------------------------------------------

  private void runIfOpen(final Runnable task) {
    if (!closed) {
      task.run();
    }
  }

  /** Queues {@code task} on the loop; false when the loop is gone. */
  private boolean execute(final Runnable task) {
    try {
      loop.execute(() -> guarded(task));
      return true;
    } catch (final RejectedExecutionException e) {
      LOG.debug("{}: event loop gone", name);
      return false;
    }
  }

  /** Runs {@code task} here (on the loop), logging what it throws, then the owner's hook. */
  private void guarded(final Runnable task) {
    try {
      task.run();
    } catch (final RuntimeException e) {
      LOG.warn("{} task failed", name, e);
    }
    owner.afterTask();
  }
}
