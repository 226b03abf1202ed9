package io.relaypinner.ipfs.bitswap;

import io.netty.channel.Channel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.ipfs.bitswap.BitswapEngine.Outgoing;
import io.relaypinner.ipfs.bitswap.BitswapEngine.Turn;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.PeerBanEngine;
import io.relaypinner.libp2p.host.PeerInboundQueue;
import io.relaypinner.libp2p.netty.UvarintFrameDecoder;
import io.relaypinner.libp2p.stream.PeerStreams;
import io.relaypinner.libp2p.stream.ProtocolBinding;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bitswap 1.2.0 (also answering 1.1.0 and 1.0.0; ipfs/specs src/bitswap-protocol.md) on a
 * {@link Host}: serves the blocks of a {@link Blockstore} to peers that want them, and fetches
 * blocks from connected peers ({@link #get}). This class is the Netty side only: streams, the
 * event loop, the storage executor and timers; the protocol's state and decisions (ledgers, the
 * deficit-round-robin turn order, our wants, back-off and timeouts) are in {@link
 * BitswapEngine}, whose Javadoc says what is served when.
 *
 * <p><b>Streams.</b> As Helia does, a peer's stream to us is only read, and everything we send
 * goes on our own stream to the peer ({@link PeerStreams}), opened when needed and closed after
 * {@link BitswapConfig#outboundIdleTimeout()} without use (Helia aborts idle inbound streams). At
 * most {@link BitswapConfig#maxOutboxMessages()} messages wait for a peer that does not read; the
 * oldest then goes, and the wants it served stay in the ledger. A peer's streams to us stop being
 * read while its {@link PeerInboundQueue} (decoded messages waiting over all its streams and
 * protocols) is full.
 *
 * <p>Threading: one event loop of the host runs the engine; blockstore calls run on the storage
 * executor. Every public method may be called from any thread and does not block.
 */
public final class Bitswap implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Bitswap.class);
  private static final int MAX_OPEN_ATTEMPTS = 3;
  private static final Duration REOPEN_DELAY = Duration.ofMillis(200);
  private static final Duration TICK = Duration.ofMillis(500);

  private final Host host;
  private final Blockstore blockstore;
  private final Executor storage;
  private final BitswapConfig config;
  private final BitswapFrameCodec codec;
  private final BitswapEngine engine;
  /** The ids, our streams, the peers that speak bitswap, the loop. */
  private final ProtocolBinding<Outgoing> binding;
  private final PeerStreams<Outgoing> streams;
  private final EventExecutor loop;

  private Bitswap(final Host host, final Blockstore blockstore, final Executor storage,
      final BitswapConfig config, final Clock clock) {
    this.host = host;
    this.blockstore = blockstore;
    this.storage = storage;
    this.config = config;
    this.codec = new BitswapFrameCodec(config);
    this.engine = new BitswapEngine(config, clock, new EngineOutput());
    // Bytes: one turn's output (a quantum and one block over) plus wants, with room to spare.
    this.binding = new ProtocolBinding<>(host, new PeerStreams.Options("bitswap",
        BitswapProtocol.PROTOCOL_IDS, config.maxOutboxMessages(),
        4L * config.bytesPerTurn() + 2L * config.maxMessageSize(), true, true,
        MAX_OPEN_ATTEMPTS, REOPEN_DELAY, config.outboundIdleTimeout(), true),
        new StreamPolicy(), new StreamEvents(), new BindingOwner());
    this.streams = binding.streams();
    this.loop = binding.loop();
  }

  /**
   * Registers {@code /ipfs/bitswap/1.2.0}, {@code 1.1.0} and {@code 1.0.0} on {@code host} and
   * starts serving {@code blockstore}.
   *
   * @param storage runs blockstore reads and writes; should be bounded (the caller owns it)
   * @param clock the engine's time (wants' timeouts, back-off, holds): the node's clock, as
   *     every other protocol on the host gets
   */
  public static Bitswap start(final Host host, final Blockstore blockstore,
      final Executor storage, final BitswapConfig config, final Clock clock) {
    final Bitswap bitswap = new Bitswap(host, blockstore, storage, config, clock);
    bitswap.register();
    return bitswap;
  }

  private void register() {
    binding.start();
    binding.every(TICK, TICK, () -> {
      engine.tick();
      streams.closeIdle(engine::busy);
    });
  }

  /** What the binding asks of bitswap: the inbound pipeline, the peers' comings and goings. */
  private final class BindingOwner implements ProtocolBinding.Owner {
    @Override
    public void installInbound(final Channel stream, final String protocol,
        final Connection connection) {
      final PeerId peer = connection.remotePeer();
      stream.pipeline().addLast("bitswap-idle", new IdleStateHandler(
          config.inboundIdleTimeout().toMillis(), 0, 0, TimeUnit.MILLISECONDS));
      stream.pipeline().addLast("bitswap-frames",
          new UvarintFrameDecoder(config.maxMessageSize()));
      stream.pipeline().addLast("bitswap-in", new BitswapInboundHandler(codec,
          (decoded, size) -> binding.deliver(connection, stream, size,
              () -> received(connection, peer, decoded)),
          reason -> {
            connection.reportFault(PeerBanEngine.Fault.MALFORMED_MESSAGE);
            binding.onLoop(() -> engine.reject(reason));
          }));
    }

    @Override
    public void peerSpeaks(final PeerId peer) {
      if (host.connection(peer).isPresent()) {
        engine.peerConnected(peer);
      }
    }

    @Override
    public void peerGone(final PeerId peer) {
      engine.peerDisconnected(peer);
    }

    @Override
    public void closed() {
      engine.close();
    }
  }

  /** A peer's message, on the loop; false when it broke a bound. */
  private boolean received(final Connection connection, final PeerId peer,
      final BitswapFrameCodec.Decoded decoded) {
    if (!connection.isOpen() && host.connection(peer).isEmpty()) {
      // The peer left while the message waited: nothing to answer, nothing to blame.
      return true;
    }
    return engine.received(peer, decoded.frame(), decoded.rejectedBlocks());
  }

  // ---------------------------------------------------------------- API

  /**
   * The block of {@code cid}: from the blockstore if held, otherwise fetched from connected peers
   * and stored. Fails with {@link TimeoutException} after {@code timeout}; cancelling the future
   * withdraws this caller's interest (the want is cancelled when nobody else waits for it).
   * Never left pending by {@link #close()}: it fails then.
   */
  public CompletableFuture<byte[]> get(final Cid cid, final Duration timeout) {
    return get(cid, timeout, true);
  }

  /**
   * Like {@link #get}, but a block fetched from the network is handed to the caller only, not
   * stored (it is still checked against {@code cid}): for callers that store a block after their
   * own checks, such as OrbitDB entries whose signature must verify first. When another caller
   * asks {@link #get} for the same block meanwhile, it is stored.
   */
  public CompletableFuture<byte[]> fetch(final Cid cid, final Duration timeout) {
    return get(cid, timeout, false);
  }

  private CompletableFuture<byte[]> get(final Cid cid, final Duration timeout,
      final boolean store) {
    final CompletableFuture<byte[]> result = new CompletableFuture<>();
    if (binding.isClosed()) {
      result.completeExceptionally(new IllegalStateException("bitswap is closed"));
      return result;
    }
    try {
      storage.execute(() -> {
        final Optional<byte[]> held;
        try {
          held = blockstore.get(cid);
        } catch (final RuntimeException e) {
          result.completeExceptionally(e);
          return;
        }
        if (held.isPresent()) {
          result.complete(held.get());
        } else {
          submitWant(cid, result, timeout, store);
        }
      });
    } catch (final RejectedExecutionException e) {
      result.completeExceptionally(e);
    }
    return result;
  }

  /**
   * Registers the want on the loop, or fails {@code result} when bitswap closed meanwhile (a
   * close racing the blockstore lookup must not leave the caller waiting forever).
   */
  private void submitWant(final Cid cid, final CompletableFuture<byte[]> result,
      final Duration timeout, final boolean store) {
    try {
      loop.execute(() -> {
        try {
          // The engine fails the want at once when it is closed.
          engine.want(cid, result, timeout, store);
        } catch (final RuntimeException e) {
          LOG.warn("bitswap want of {} failed", cid, e);
          result.completeExceptionally(e);
        }
      });
    } catch (final RejectedExecutionException e) {
      result.completeExceptionally(new IllegalStateException("bitswap is closed", e));
      return;
    }
    result.whenComplete((data, error) -> {
      if (error != null) {
        binding.onLoop(() -> engine.waiterGone(cid, result));
      }
    });
  }

  /**
   * Tells the server that {@code cid} is now in the blockstore (put there by someone else), so
   * peers waiting for it are served.
   */
  public void blockAdded(final Cid cid) {
    binding.onLoop(() -> engine.blockAdded(cid.multihash()));
  }

  /** Counters and gauges now. */
  public BitswapStats stats() {
    return engine.stats();
  }

  /** The number of wantlist entries each peer has with us, read on the loop. */
  public CompletableFuture<Map<PeerId, Integer>> wantlistSizes() {
    return binding.call(engine::wantlistSizes);
  }

  /** Peers known to speak bitswap with an open connection, read on the loop. */
  public CompletableFuture<Set<PeerId>> peers() {
    return binding.call(engine::peers);
  }

  /** How many connected peers speak bitswap now (a cheap read). */
  public int peerCount() {
    return engine.peerCount();
  }

  /** The host's monotonic time, which {@link NetworkPinner}'s deadlines are measured on. */
  Ticker ticker() {
    return host.ticker();
  }

  public BitswapConfig config() {
    return config;
  }

  /** Unregisters the protocols, fails pending gets and closes our streams. */
  @Override
  public void close() {
    binding.close();
  }

  private final class EngineOutput implements BitswapEngine.Output {
    @Override
    public void send(final PeerId peer, final Outgoing message) {
      streams.send(peer, message);
    }

    @Override
    public void load(final Turn turn) {
      try {
        storage.execute(() -> {
          final List<BitswapEngine.Outcome> outcomes = turn.load(blockstore);
          binding.onLoopAlways(() -> engine.turnDone(turn, outcomes));
        });
      } catch (final RejectedExecutionException e) {
        engine.turnDone(turn, List.of());
      }
    }

    @Override
    public void store(final Cid cid, final byte[] data) {
      try {
        storage.execute(() -> {
          Throwable failure = null;
          try {
            // Durable at the next barrier: whoever references it (a pin, a log) syncs first.
            blockstore.stage(cid, data);
          } catch (final RuntimeException e) {
            failure = e;
          }
          final Throwable error = failure;
          binding.onLoopAlways(() -> engine.stored(cid, error));
        });
      } catch (final RejectedExecutionException e) {
        engine.stored(cid, e);
      }
    }

    @Override
    public boolean canSend(final PeerId peer) {
      return streams.canSend(peer);
    }

    @Override
    public void flushSoon() {
      binding.onLoopAlways(engine::flush);
    }

    @Override
    public void flushAfter(final Duration delay) {
      binding.later(delay, engine::flush);
    }
  }

  private final class StreamPolicy implements PeerStreams.Policy<Outgoing> {
    @Override
    public byte[] encode(final Outgoing message, final String protocol) {
      return codec.encode(message.frame(), BitswapProtocol.Version.of(protocol));
    }

    @Override
    public int size(final Outgoing message) {
      return (int) Math.min(Integer.MAX_VALUE, message.blockBytes() + 64L
          * (message.frame().wants().size() + message.frame().presences().size() + 1));
    }

    @Override
    public PeerStreams.Overflow overflow(final Outgoing message) {
      // The peer does not read: the oldest message goes (wants are re-sent by the engine, the
      // wants it served stay in the ledger and are served again once the peer reads).
      return PeerStreams.Overflow.DROP_OLDEST;
    }
  }

  private final class StreamEvents implements PeerStreams.Events<Outgoing> {
    @Override
    public void openFailed(final PeerId peer, final Throwable cause) {
      engine.reject(BitswapReject.STREAM_OPEN_FAILED);
    }

    @Override
    public void drained(final PeerId peer) {
      engine.drained(peer);
    }

    @Override
    public void written(final PeerId peer, final Outgoing message) {
      engine.sent(peer, message);
    }

    @Override
    public void dropped(final PeerId peer, final Outgoing message, final PeerStreams.Drop reason) {
      switch (reason) {
        case QUEUE_FULL -> engine.unsent(peer, message, BitswapReject.SEND_QUEUE_FULL, false);
        case WRITE_FAILED -> engine.unsent(peer, message, BitswapReject.SEND_FAILED, false);
        // No stream could be opened: what it served waits for the peer's next message.
        case OPEN_FAILED, NO_STREAM, STREAM_ENDED, SLOW_PEER ->
            engine.unsent(peer, message, null, true);
        case CLOSED -> engine.unsent(peer, message, null, true);
        default -> throw new IllegalStateException(reason.name());
      }
    }
  }
}
