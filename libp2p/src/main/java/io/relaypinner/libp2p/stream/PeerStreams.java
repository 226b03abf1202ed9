package io.relaypinner.libp2p.stream;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.Stream;
import io.relaypinner.libp2p.multistream.ProtocolInstaller;
import io.relaypinner.libp2p.netty.UvarintFrameEncoder;
import io.relaypinner.libp2p.netty.WriteOnlyStreamHandler;
import io.relaypinner.multiformats.PeerId;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One long-lived outbound stream per peer for a protocol that sends on its own stream and reads
 * the peer's (gossipsub, libp2p/specs pubsub/gossipsub-v1.0.md; bitswap, ipfs/specs
 * bitswap-protocol.md): opens it (retrying a failed open a few times, later each time), writes
 * length-prefixed messages, queues them within a bound while the stream is not writable, drains
 * the queue when it is, and closes streams left idle. What happens at each limit is the owner's
 * choice ({@link Policy}); every drop is reported ({@link Events#dropped}), never silent.
 *
 * <p>Threading: confined to {@code loop}. Every method must be called on it and every event is
 * delivered on it (Netty callbacks of the streams hop there first). Idle time is measured on the
 * host's {@link Host#ticker() ticker}.
 *
 * @param <M> the owner's message type
 */
public final class PeerStreams<M> {
  private static final Logger LOG = LoggerFactory.getLogger(PeerStreams.class);

  /** Why a message was not written. */
  public enum Drop {
    /** The queue was at its bound ({@link Overflow#DROP_NEW} or {@link Overflow#DROP_OLDEST}). */
    QUEUE_FULL,
    /** No stream and {@link Options#openOnSend()} is off. */
    NO_STREAM,
    /** The stream could not be opened {@link Options#maxOpenAttempts()} times in a row. */
    OPEN_FAILED,
    /** The stream ended with the message queued and {@link Options#keepQueueOnEnd()} is off. */
    STREAM_ENDED,
    /** The stream was closed because the peer does not read (hard bound reached). */
    SLOW_PEER,
    /** The write failed. */
    WRITE_FAILED,
    /** The peer was removed or everything closed. */
    CLOSED
  }

  /** What to do with a message that does not fit the queue's soft bound. */
  public enum Overflow {
    /** Drop the new message. */
    DROP_NEW,
    /** Drop the oldest queued message(s) to make room. */
    DROP_OLDEST,
    /** Queue it anyway, up to twice the bound; beyond that the stream is closed. */
    ACCEPT
  }

  /** The owner's encoding and overflow choices. */
  public interface Policy<M> {
    /** The message's bytes (without the length prefix) on a stream of {@code protocol}. */
    byte[] encode(M message, String protocol);

    /** Bytes {@code message} counts for in the queue bound. */
    int size(M message);

    /** What to do with {@code message} when the queue is at its soft bound. */
    Overflow overflow(M message);
  }

  /** What happened to a peer's stream and messages; all on the loop. */
  public interface Events<M> {
    /** Our stream to {@code peer} is open (queued messages follow). */
    default void opened(final PeerId peer, final String protocol) {}

    /** An open failed ({@code cause} may be null: the stream closed at once). */
    default void openFailed(final PeerId peer, final Throwable cause) {}

    /** Our stream to {@code peer} ended (closed by either side or reset). */
    default void ended(final PeerId peer) {}

    /** The queue to {@code peer} is empty and its stream writable. */
    default void drained(final PeerId peer) {}

    /** {@code message} was written. */
    default void written(final PeerId peer, final M message) {}

    /** {@code message} was not (or not surely) delivered. */
    default void dropped(final PeerId peer, final M message, final Drop reason) {}
  }

  /**
   * @param name protocol name for logs and handler names
   * @param protocolIds offered when opening, best first
   * @param maxQueuedMessages soft bound on messages queued per peer
   * @param maxQueuedBytes soft bound on bytes queued per peer (hard bound: twice this)
   * @param openOnSend whether a message for a peer without a stream opens one (else dropped)
   * @param keepQueueOnEnd whether queued messages survive the stream's end (and reopen it)
   * @param maxOpenAttempts failed opens in a row before the queue is dropped
   * @param reopenDelay delay before the n-th retry is n times this
   * @param idleTimeout a stream unused this long is closed by {@link #closeIdle} (null: never)
   * @param reportWritten whether {@link Events#written} is called (one loop task per message)
   */
  public record Options(String name, List<String> protocolIds, int maxQueuedMessages,
      long maxQueuedBytes, boolean openOnSend, boolean keepQueueOnEnd, int maxOpenAttempts,
      Duration reopenDelay, Duration idleTimeout, boolean reportWritten) {
    /** Validates. */
    public Options {
      protocolIds = List.copyOf(protocolIds);
      if (protocolIds.isEmpty() || maxQueuedMessages < 1 || maxQueuedBytes < 1
          || maxOpenAttempts < 1 || reopenDelay.isNegative()
          || (idleTimeout != null && (idleTimeout.isZero() || idleTimeout.isNegative()))) {
        throw new IllegalArgumentException("bad peer stream options for " + name);
      }
    }
  }

  /**
   * What this class uses of the {@link Host}: a peer's open connection and what its identify
   * listed. The host in production; unit tests open streams on embedded channels instead.
   */
  interface Peers {
    /** How to open streams to {@code peer} on an open connection, if it has one. */
    Optional<Link> link(PeerId peer);

    /** {@link Host#knownProtocol}. */
    Optional<String> knownProtocol(PeerId peer, List<String> protocolIds);
  }

  /**
   * Opens streams on one connection, as {@link Connection#newStream} and
   * {@link Connection#newLazyStream} do.
   */
  interface Link {
    CompletableFuture<Stream> newStream(List<String> protocolIds, ProtocolInstaller installer);

    CompletableFuture<Stream> newLazyStream(String protocol, ProtocolInstaller installer);
  }

  /** Our side of one peer. */
  private final class PeerStream {
    private final PeerId peer;
    private Channel channel;
    private String protocol;
    private boolean opening;
    /** The protocol of {@link #channel} was echoed (always, unless opened lazily). */
    private boolean confirmed;
    private int failedOpens;
    private long lastUseNanos;
    private final ArrayDeque<M> queue = new ArrayDeque<>();
    private long queuedBytes;

    PeerStream(final PeerId peer) {
      this.peer = peer;
    }
  }

  private final Peers peers;
  private final EventExecutor loop;
  private final Ticker ticker;
  private final Options options;
  private final Policy<M> policy;
  private final Events<M> events;
  private final Map<PeerId, PeerStream> streams = new HashMap<>();
  private boolean closed;

  /**
   * @param loop the owner's event loop: all calls and events happen on it
   */
  public PeerStreams(final Host host, final EventExecutor loop, final Options options,
      final Policy<M> policy, final Events<M> events) {
    this(peersOf(host), loop, host.ticker(), options, policy, events);
  }

  /** On {@code peers} and {@code ticker} instead of a host's (unit tests). */
  PeerStreams(final Peers peers, final EventExecutor loop, final Ticker ticker,
      final Options options, final Policy<M> policy, final Events<M> events) {
    this.peers = peers;
    this.loop = loop;
    this.ticker = ticker;
    this.options = options;
    this.policy = policy;
    this.events = events;
  }

  private static Peers peersOf(final Host host) {
    return new Peers() {
      @Override
      public Optional<Link> link(final PeerId peer) {
        return host.connection(peer).map(connection -> new Link() {
          @Override
          public CompletableFuture<Stream> newStream(final List<String> protocolIds,
              final ProtocolInstaller installer) {
            return connection.newStream(protocolIds, installer);
          }

          @Override
          public CompletableFuture<Stream> newLazyStream(final String protocol,
              final ProtocolInstaller installer) {
            return connection.newLazyStream(protocol, installer);
          }
        });
      }

      @Override
      public Optional<String> knownProtocol(final PeerId peer, final List<String> protocolIds) {
        return host.knownProtocol(peer, protocolIds);
      }
    };
  }

  /** Opens our stream to {@code peer} unless it is open or opening. */
  public void open(final PeerId peer) {
    if (closed || peers.link(peer).isEmpty()) {
      return;
    }
    ensureOpen(streams.computeIfAbsent(peer, PeerStream::new));
  }

  /** Whether our stream to {@code peer} is open. */
  public boolean isOpen(final PeerId peer) {
    final PeerStream stream = streams.get(peer);
    return stream != null && stream.channel != null;
  }

  /**
   * Whether a message sent now would be written at once or open a stream: nothing queued, and the
   * stream (if any) writable. Owners that produce a lot (bitswap turns) wait for this.
   */
  public boolean canSend(final PeerId peer) {
    final PeerStream stream = streams.get(peer);
    return stream == null
        || (stream.queue.isEmpty() && (stream.channel == null || stream.channel.isWritable()));
  }

  /** Messages queued for {@code peer} now. */
  public int queuedMessages(final PeerId peer) {
    final PeerStream stream = streams.get(peer);
    return stream == null ? 0 : stream.queue.size();
  }

  /** Writes or queues {@code message} for {@code peer}. */
  public void send(final PeerId peer, final M message) {
    if (closed) {
      events.dropped(peer, message, Drop.CLOSED);
      return;
    }
    PeerStream stream = streams.get(peer);
    if (stream == null || stream.channel == null) {
      if (!options.openOnSend()) {
        events.dropped(peer, message, Drop.NO_STREAM);
        return;
      }
      if (stream == null) {
        stream = new PeerStream(peer);
        streams.put(peer, stream);
      }
    }
    if (stream.channel != null && stream.queue.isEmpty() && stream.channel.isWritable()) {
      write(stream, message);
      return;
    }
    final int size = policy.size(message);
    if (stream.queue.size() >= options.maxQueuedMessages()
        || stream.queuedBytes + size > options.maxQueuedBytes()) {
      switch (policy.overflow(message)) {
        case DROP_NEW -> {
          events.dropped(peer, message, Drop.QUEUE_FULL);
          return;
        }
        case DROP_OLDEST -> {
          while (!stream.queue.isEmpty() && (stream.queue.size() >= options.maxQueuedMessages()
              || stream.queuedBytes + size > options.maxQueuedBytes())) {
            final M oldest = stream.queue.poll();
            stream.queuedBytes -= policy.size(oldest);
            events.dropped(peer, oldest, Drop.QUEUE_FULL);
          }
        }
        case ACCEPT -> {
          if (stream.queue.size() >= 2 * options.maxQueuedMessages()
              || stream.queuedBytes + size > 2 * options.maxQueuedBytes()) {
            // Even what must not be dropped piles up: the peer does not read. Close; the owner
            // reopens and resends its state.
            LOG.debug("{}: closing our stream to {}: it does not read", options.name(), peer);
            events.dropped(peer, message, Drop.SLOW_PEER);
            if (stream.channel != null) {
              stream.channel.close();
            }
            return;
          }
        }
        default -> throw new IllegalStateException();
      }
    }
    stream.queue.add(message);
    stream.queuedBytes += size;
    ensureOpen(stream);
  }

  /** Closes streams unused for {@link Options#idleTimeout()} whose peer is not {@code busy}. */
  public void closeIdle(final Predicate<PeerId> busy) {
    if (options.idleTimeout() == null) {
      return;
    }
    final long now = ticker.nanoTime();
    final long idle = options.idleTimeout().toNanos();
    for (final PeerStream stream : streams.values()) {
      if (stream.channel != null && stream.queue.isEmpty() && now - stream.lastUseNanos > idle
          && !busy.test(stream.peer)) {
        final Channel channel = stream.channel;
        stream.channel = null;
        channel.close();
      }
    }
  }

  /** Forgets {@code peer} (its connection is gone): closes its stream, drops its queue. */
  public void remove(final PeerId peer) {
    final PeerStream stream = streams.remove(peer);
    if (stream != null) {
      dropQueue(stream, Drop.CLOSED);
      if (stream.channel != null) {
        stream.channel.close();
      }
    }
  }

  /** Closes every stream; later sends are dropped. */
  public void closeAll() {
    closed = true;
    for (final PeerId peer : List.copyOf(streams.keySet())) {
      remove(peer);
    }
  }

  // ------------------------------------------------------------------------------------------

  private void ensureOpen(final PeerStream stream) {
    if (stream.channel != null || stream.opening || closed) {
      return;
    }
    final Optional<Link> connection = peers.link(stream.peer);
    if (connection.isEmpty()) {
      dropQueue(stream, Drop.CLOSED);
      return;
    }
    stream.opening = true;
    // Optimistic when the peer's identify listed one of our protocols (unless the last open
    // failed): the stream is ours at once, and what is queued goes out with the proposal, a
    // round trip sooner (the first block a fresh reader asked for, say).
    final Optional<String> known = stream.failedOpens == 0
        ? peers.knownProtocol(stream.peer, options.protocolIds()) : Optional.empty();
    if (known.isPresent()) {
      connection.get().newLazyStream(known.get(), (channel, protocol) -> {
        install(stream, channel);
        onLoop(() -> lazilyOpened(stream, channel, protocol));
      }).whenComplete((opened, error) -> onLoop(() -> lazilySelected(stream, opened, error)));
    } else {
      connection.get().newStream(options.protocolIds(), (channel, protocol) ->
          install(stream, channel))
          .whenComplete((opened, error) -> onLoop(() -> opened(stream, opened, error)));
    }
  }

  private void install(final PeerStream stream, final Channel channel) {
    channel.pipeline().addLast(options.name() + "-frame-encoder", UvarintFrameEncoder.INSTANCE);
    channel.pipeline().addLast(options.name() + "-out", new WriteOnlyStreamHandler(
        options.name(), c -> onLoop(() -> drain(stream, c)),
        c -> onLoop(() -> ended(stream, c))));
  }

  /** A negotiated open ended, with the stream or with {@code error}. */
  private void opened(final PeerStream stream, final Stream opened, final Throwable error) {
    stream.opening = false;
    if (closed || streams.get(stream.peer) != stream) {
      if (opened != null) {
        opened.channel().close();
      }
      return;
    }
    if (error != null || !opened.channel().isActive()) {
      openFailed(stream, error);
      return;
    }
    use(stream, opened.channel(), opened.protocol(), true);
  }

  /** A lazy stream is installed: usable at once, its protocol not echoed yet. */
  private void lazilyOpened(final PeerStream stream, final Channel channel,
      final String protocol) {
    stream.opening = false;
    if (closed || streams.get(stream.peer) != stream) {
      channel.close();
      return;
    }
    if (!channel.isActive()) {
      openFailed(stream, null);
      return;
    }
    use(stream, channel, protocol, false);
  }

  /**
   * A lazy stream's selection ended. On success the stream is confirmed; on failure (the peer
   * answered {@code na}: identify was stale) the stream is closed, {@link #ended} counts a failed
   * open, and the next open negotiates.
   */
  private void lazilySelected(final PeerStream stream, final Stream opened,
      final Throwable error) {
    if (error == null) {
      if (stream.channel == opened.channel()) {
        stream.confirmed = true;
        stream.failedOpens = 0;
      }
      return;
    }
    if (stream.opening) {
      // Never installed (the muxer refused the stream): an open that failed.
      opened(stream, null, error);
      return;
    }
    LOG.debug("{} stream to {}: optimistic selection failed: {}", options.name(), stream.peer,
        error.toString());
    events.openFailed(stream.peer, error);
  }

  private void use(final PeerStream stream, final Channel channel, final String protocol,
      final boolean confirmed) {
    if (confirmed) {
      stream.failedOpens = 0;
    }
    stream.channel = channel;
    stream.protocol = protocol;
    stream.confirmed = confirmed;
    stream.lastUseNanos = ticker.nanoTime();
    events.opened(stream.peer, protocol);
    drain(stream, channel);
  }

  private void openFailed(final PeerStream stream, final Throwable error) {
    stream.failedOpens++;
    LOG.debug("{} stream to {} failed: {}", options.name(), stream.peer,
        error == null ? "closed at once" : error.toString());
    events.openFailed(stream.peer, error);
    if (stream.failedOpens >= options.maxOpenAttempts()) {
      // Give up on what is queued; the owner opens again when the peer is heard from.
      stream.failedOpens = 0;
      dropQueue(stream, Drop.OPEN_FAILED);
    } else {
      loop.schedule(() -> onLoop(() -> {
        if (streams.get(stream.peer) == stream) {
          ensureOpen(stream);
        }
      }), options.reopenDelay().toMillis() * stream.failedOpens, TimeUnit.MILLISECONDS);
    }
  }

  private void drain(final PeerStream stream, final Channel channel) {
    if (stream.channel != channel || streams.get(stream.peer) != stream) {
      return;
    }
    while (!stream.queue.isEmpty() && channel.isWritable()) {
      final M message = stream.queue.poll();
      // State first: the write may fire channelWritabilityChanged synchronously.
      stream.queuedBytes -= policy.size(message);
      write(stream, message);
    }
    if (stream.queue.isEmpty() && channel.isWritable()) {
      events.drained(stream.peer);
    }
  }

  private void write(final PeerStream stream, final M message) {
    final byte[] body = policy.encode(message, stream.protocol);
    stream.lastUseNanos = ticker.nanoTime();
    final PeerId peer = stream.peer;
    stream.channel.writeAndFlush(Unpooled.wrappedBuffer(body)).addListener(f -> {
      if (f.isSuccess()) {
        if (options.reportWritten()) {
          onLoop(() -> events.written(peer, message));
        }
      } else {
        LOG.debug("{} write to {} failed: {}", options.name(), peer, f.cause().toString());
        onLoop(() -> events.dropped(peer, message, Drop.WRITE_FAILED));
      }
    });
  }

  private void ended(final PeerStream stream, final Channel channel) {
    // Only the current stream's end counts (one closed as idle was let go already).
    if (stream.channel != channel || streams.get(stream.peer) != stream) {
      return;
    }
    stream.channel = null;
    if (!stream.confirmed) {
      // A lazy stream that ended before its protocol was echoed: the next open negotiates.
      stream.failedOpens++;
    }
    if (!options.keepQueueOnEnd()) {
      dropQueue(stream, Drop.STREAM_ENDED);
    }
    events.ended(stream.peer);
    if (!closed && streams.get(stream.peer) == stream && !stream.queue.isEmpty()) {
      ensureOpen(stream);
    }
  }

  private void dropQueue(final PeerStream stream, final Drop reason) {
    while (!stream.queue.isEmpty()) {
      final M message = stream.queue.poll();
      events.dropped(stream.peer, message, reason);
    }
    stream.queuedBytes = 0;
  }

  /** Runs {@code task} on the loop, also after {@link #closeAll} (events must not be lost). */
  private void onLoop(final Runnable task) {
    try {
      loop.execute(() -> {
        try {
          task.run();
        } catch (final RuntimeException e) {
          LOG.warn("{} stream task failed", options.name(), e);
        }
      });
    } catch (final RejectedExecutionException e) {
      LOG.debug("{}: loop gone, event dropped", options.name());
    }
  }
}
