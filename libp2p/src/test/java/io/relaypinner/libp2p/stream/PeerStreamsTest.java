package io.relaypinner.libp2p.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.libp2p.core.NoSuchProtocolException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Stream;
import io.relaypinner.libp2p.multistream.ProtocolInstaller;
import io.relaypinner.libp2p.stream.PeerStreams.Drop;
import io.relaypinner.libp2p.stream.PeerStreams.Overflow;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link PeerStreams} without sockets: the loop is an embedded channel's on a {@link MockTicker},
 * streams are embedded channels the test opens, refuses, blocks and closes by hand, so the queue
 * bounds, back-pressure, reopen delays, idle rule and optimistic selection are checked step by
 * step. Messages are strings, one byte per character; {@code encode} appends the stream's
 * protocol so a frame shows which protocol it was encoded for.
 */
class PeerStreamsTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String V2 = "/test/2.0.0";
  private static final String V1 = "/test/1.0.0";
  private static final Duration REOPEN = Duration.ofMillis(200);

  private final MockTicker ticker = Ticker.newMockTicker();
  private final EmbeddedChannel loop = EmbeddedChannel.builder().ticker(ticker).build();
  private final FakePeers peers = new FakePeers();
  private final List<String> events = new ArrayList<>();
  private final PeerId peer = peer();
  /** What each message does at the soft bound; DROP_NEW unless a test says otherwise. */
  private Function<String, Overflow> overflow = message -> Overflow.DROP_NEW;
  private PeerStreams<String> streams;

  private static PeerId peer() {
    return Keys.generate(KeyType.ED25519, RANDOM).publicKey().peerId();
  }

  // --- fixture --------------------------------------------------------------------------------

  /** One stream open the code under test asked for; the test answers it. */
  private final class Open {
    final List<String> protocols;
    final boolean lazy;
    final ProtocolInstaller installer;
    final CompletableFuture<Stream> result = new CompletableFuture<>();
    EmbeddedChannel channel;

    Open(final List<String> protocols, final boolean lazy, final ProtocolInstaller installer) {
      this.protocols = protocols;
      this.lazy = lazy;
      this.installer = installer;
    }

    /** A negotiated open: the remote chose {@code protocol}. */
    EmbeddedChannel accept(final String protocol) {
      channel = newStream();
      install(installer, channel, protocol);
      result.complete(new Stream(channel, protocol, null));
      settle();
      return channel;
    }

    /** A lazy open: the remote echoed the proposal. */
    void echo() {
      result.complete(new Stream(channel, protocols.get(0), null));
      settle();
    }

    /** A lazy open: the remote answered {@code na}, the stream is closed. */
    void na() {
      result.completeExceptionally(new NoSuchProtocolException("na"));
      channel.close();
      settle();
    }

    /** The open failed before a stream existed (muxer refused, connection lost). */
    void fail() {
      result.completeExceptionally(new IOException("refused"));
      settle();
    }
  }

  /** The host as {@link PeerStreams} sees it: connected peers, identify, stream opens. */
  private final class FakePeers implements PeerStreams.Peers {
    final Set<PeerId> connected = new HashSet<>();
    final Map<PeerId, String> identified = new HashMap<>();
    final List<Open> opens = new ArrayList<>();
    /** Whether lazy streams are refused before they exist (the muxer's stream limit). */
    boolean muxerRefuses;

    @Override
    public Optional<PeerStreams.Link> link(final PeerId peer) {
      if (!connected.contains(peer)) {
        return Optional.empty();
      }
      return Optional.of(new PeerStreams.Link() {
        @Override
        public CompletableFuture<Stream> newStream(final List<String> protocolIds,
            final ProtocolInstaller installer) {
          final Open open = new Open(protocolIds, false, installer);
          opens.add(open);
          return open.result;
        }

        @Override
        public CompletableFuture<Stream> newLazyStream(final String protocol,
            final ProtocolInstaller installer) {
          final Open open = new Open(List.of(protocol), true, installer);
          if (!muxerRefuses) {
            // As the connection does: the handlers go in as soon as the stream exists.
            open.channel = PeerStreamsTest.this.newStream();
            install(installer, open.channel, protocol);
          }
          opens.add(open);
          return open.result;
        }
      });
    }

    @Override
    public Optional<String> knownProtocol(final PeerId peer, final List<String> protocolIds) {
      final String listed = identified.get(peer);
      return listed != null && protocolIds.contains(listed) ? Optional.of(listed)
          : Optional.empty();
    }

    Open last() {
      return opens.get(opens.size() - 1);
    }
  }

  private final List<EmbeddedChannel> channels = new ArrayList<>();

  private EmbeddedChannel newStream() {
    final EmbeddedChannel channel = EmbeddedChannel.builder().ticker(ticker).build();
    channels.add(channel);
    return channel;
  }

  private final class Recorder implements PeerStreams.Events<String> {
    @Override
    public void opened(final PeerId p, final String protocol) {
      events.add("opened " + protocol);
    }

    @Override
    public void openFailed(final PeerId p, final Throwable cause) {
      events.add("openFailed");
    }

    @Override
    public void ended(final PeerId p) {
      events.add("ended");
    }

    @Override
    public void drained(final PeerId p) {
      events.add("drained");
    }

    @Override
    public void written(final PeerId p, final String message) {
      events.add("written " + message);
    }

    @Override
    public void dropped(final PeerId p, final String message, final Drop reason) {
      events.add("dropped " + message + " " + reason);
    }
  }

  private PeerStreams<String> streams(final int maxMessages, final long maxBytes,
      final boolean openOnSend, final boolean keepQueueOnEnd, final Duration idleTimeout) {
    streams = new PeerStreams<>(peers, loop.eventLoop(), ticker, new PeerStreams.Options("test",
        List.of(V2, V1), maxMessages, maxBytes, openOnSend, keepQueueOnEnd, 3, REOPEN,
        idleTimeout, true), new PeerStreams.Policy<>() {
          @Override
          public byte[] encode(final String message, final String protocol) {
            return (message + "@" + protocol).getBytes(StandardCharsets.UTF_8);
          }

          @Override
          public int size(final String message) {
            return message.length();
          }

          @Override
          public Overflow overflow(final String message) {
            return overflow.apply(message);
          }
        }, new Recorder());
    peers.connected.add(peer);
    return streams;
  }

  private PeerStreams<String> streams() {
    return streams(4, 1_000, true, true, Duration.ofSeconds(30));
  }

  /** Runs what the streams' callbacks handed to the loop. */
  private void settle() {
    for (final EmbeddedChannel channel : List.copyOf(channels)) {
      channel.runPendingTasks();
    }
    loop.runPendingTasks();
  }

  private void advance(final Duration by) {
    ticker.advance(by.toNanos(), TimeUnit.NANOSECONDS);
    loop.runScheduledPendingTasks();
    settle();
  }

  private void send(final String... messages) {
    for (final String message : messages) {
      streams.send(peer, message);
    }
    settle();
  }

  private List<String> takeEvents() {
    final List<String> taken = List.copyOf(events);
    events.clear();
    return taken;
  }

  /** The frames written on {@code stream}, as strings (length prefixes checked). */
  private static List<String> frames(final EmbeddedChannel stream) {
    final ByteBuf all = Unpooled.buffer();
    for (Object out = stream.readOutbound(); out != null; out = stream.readOutbound()) {
      all.writeBytes((ByteBuf) out);
      ((ByteBuf) out).release();
    }
    final List<String> frames = new ArrayList<>();
    while (all.isReadable()) {
      final int length = all.readByte();
      assertThat(length).as("one-byte uvarint").isBetween(0, 127);
      frames.add(all.readCharSequence(length, StandardCharsets.UTF_8).toString());
    }
    all.release();
    return frames;
  }

  /** What the connection does when the protocol is selected (or, lazily, proposed). */
  private static void install(final ProtocolInstaller installer, final EmbeddedChannel stream,
      final String protocol) {
    try {
      installer.install(stream, protocol);
    } catch (final Exception e) {
      throw new AssertionError(e);
    }
  }

  private static void setWritable(final EmbeddedChannel stream, final boolean writable) {
    stream.unsafe().outboundBuffer().setUserDefinedWritability(1, writable);
  }

  @AfterEach
  void releaseEverything() {
    for (final EmbeddedChannel channel : channels) {
      channel.finishAndReleaseAll();
    }
    loop.finishAndReleaseAll();
  }

  // --- opening and writing --------------------------------------------------------------------

  @Test
  void send_shouldOpenANegotiatedStream_andWriteWhatWasQueued_inOrder() {
    streams();
    send("a", "b");
    assertThat(peers.opens).hasSize(1);
    assertThat(peers.last().lazy).isFalse();
    assertThat(peers.last().protocols).containsExactly(V2, V1);
    assertThat(streams.queuedMessages(peer)).isEqualTo(2);
    assertThat(streams.canSend(peer)).isFalse();
    assertThat(streams.isOpen(peer)).isFalse();

    final EmbeddedChannel stream = peers.last().accept(V1);
    assertThat(streams.isOpen(peer)).isTrue();
    assertThat(frames(stream)).containsExactly("a@" + V1, "b@" + V1);
    assertThat(takeEvents()).containsExactly("opened " + V1, "drained", "written a",
        "written b");

    // Open, writable and nothing queued: written at once, no second open.
    send("c");
    assertThat(frames(stream)).containsExactly("c@" + V1);
    assertThat(peers.opens).hasSize(1);
    assertThat(streams.canSend(peer)).isTrue();
  }

  @Test
  void openOnSendOff_shouldDropMessagesForPeersWithoutAStream_untilOpenIsCalled() {
    streams(4, 1_000, false, true, null);
    send("a");
    assertThat(takeEvents()).containsExactly("dropped a NO_STREAM");
    assertThat(peers.opens).isEmpty();

    streams.open(peer);
    streams.open(peer);
    assertThat(peers.opens).as("one open at a time").hasSize(1);
    final EmbeddedChannel stream = peers.last().accept(V2);
    send("b");
    assertThat(frames(stream)).containsExactly("b@" + V2);
  }

  @Test
  void aPeerWithoutAConnection_shouldGetNoStream_andItsQueueDropped() {
    streams();
    final PeerId gone = peer();
    streams.open(gone);
    assertThat(peers.opens).isEmpty();
    streams.send(gone, "a");
    settle();
    assertThat(takeEvents()).containsExactly("dropped a CLOSED");
    assertThat(streams.queuedMessages(gone)).isZero();
  }

  // --- back-pressure and bounds ---------------------------------------------------------------

  @Test
  void unwritableStream_shouldQueue_andDrainInOrderWhenWritableAgain() {
    streams();
    send("a");
    final EmbeddedChannel stream = peers.last().accept(V2);
    frames(stream);
    takeEvents();

    setWritable(stream, false);
    send("b", "c");
    assertThat(frames(stream)).isEmpty();
    assertThat(streams.queuedMessages(peer)).isEqualTo(2);
    assertThat(streams.canSend(peer)).isFalse();

    setWritable(stream, true);
    settle();
    assertThat(frames(stream)).containsExactly("b@" + V2, "c@" + V2);
    assertThat(streams.queuedMessages(peer)).isZero();
    assertThat(takeEvents()).containsExactly("drained", "written b", "written c");
  }

  @Test
  void dropNew_shouldDropTheNewMessage_atTheMessageBound() {
    streams(3, 1_000, true, true, null);
    send("a", "b", "c", "d");
    assertThat(takeEvents()).containsExactly("dropped d QUEUE_FULL");
    assertThat(frames(peers.last().accept(V2))).containsExactly("a@" + V2, "b@" + V2,
        "c@" + V2);
  }

  @Test
  void dropNew_shouldDropTheNewMessage_atTheByteBound() {
    streams(100, 10, true, true, null);
    send("aaaa", "bbbb", "ccc", "d");
    assertThat(takeEvents()).containsExactly("dropped ccc QUEUE_FULL");
    assertThat(streams.queuedMessages(peer)).isEqualTo(3);
  }

  @Test
  void dropOldest_shouldDropAsManyOldMessagesAsTheNewOneNeeds() {
    overflow = message -> Overflow.DROP_OLDEST;
    streams(100, 10, true, true, null);
    send("aaaa", "bbbb", "cc");
    send("dddddd");
    assertThat(takeEvents()).containsExactly("dropped aaaa QUEUE_FULL",
        "dropped bbbb QUEUE_FULL");
    assertThat(frames(peers.last().accept(V2))).containsExactly("cc@" + V2, "dddddd@" + V2);
  }

  @Test
  void accept_shouldQueueUpToTwiceTheBound_thenCloseTheStreamOfAPeerThatDoesNotRead() {
    overflow = message -> message.startsWith("!") ? Overflow.ACCEPT : Overflow.DROP_NEW;
    streams(2, 1_000, true, true, null);
    send("a");
    final EmbeddedChannel stream = peers.last().accept(V2);
    frames(stream);
    setWritable(stream, false);
    send("b", "c", "d", "!1", "!2");
    assertThat(streams.queuedMessages(peer)).isEqualTo(4);
    assertThat(stream.isOpen()).isTrue();

    send("!3");
    assertThat(stream.isOpen()).isFalse();
    assertThat(events).containsSubsequence("dropped d QUEUE_FULL", "dropped !3 SLOW_PEER",
        "ended");
    // The queue outlives the stream (keepQueueOnEnd): a new stream is opened for it.
    assertThat(peers.opens).hasSize(2);
    assertThat(frames(peers.last().accept(V2))).containsExactly("b@" + V2, "c@" + V2,
        "!1@" + V2, "!2@" + V2);
  }

  // --- reopen rules ---------------------------------------------------------------------------

  @Test
  void failedOpens_shouldBeRetriedLaterEachTime_thenGiveUpOnTheQueue() {
    streams();
    send("a");
    peers.last().fail();
    assertThat(takeEvents()).containsExactly("openFailed");

    // The n-th retry waits n times the reopen delay.
    advance(REOPEN.minusMillis(1));
    assertThat(peers.opens).hasSize(1);
    advance(Duration.ofMillis(1));
    assertThat(peers.opens).hasSize(2);
    peers.last().fail();
    advance(REOPEN.multipliedBy(2).minusMillis(1));
    assertThat(peers.opens).hasSize(2);
    advance(Duration.ofMillis(1));
    assertThat(peers.opens).hasSize(3);

    // The third failure in a row (maxOpenAttempts) drops the queue and stops retrying.
    peers.last().fail();
    assertThat(takeEvents()).containsExactly("openFailed", "openFailed", "dropped a OPEN_FAILED");
    advance(Duration.ofMinutes(1));
    assertThat(peers.opens).hasSize(3);

    // The count starts over: the next message opens at once.
    send("b");
    assertThat(peers.opens).hasSize(4);
  }

  @Test
  void aStreamClosedAtOnce_shouldCountAsAFailedOpen() {
    streams();
    send("a");
    final Open open = peers.last();
    final EmbeddedChannel stream = newStream();
    install(open.installer, stream, V2);
    stream.close();
    open.result.complete(new Stream(stream, V2, null));
    settle();
    assertThat(takeEvents()).containsExactly("openFailed");
    advance(REOPEN);
    assertThat(peers.opens).hasSize(2);
  }

  @Test
  void keepQueueOnEnd_shouldReopenAtOnce_forWhatIsStillQueued() {
    streams();
    send("a");
    final EmbeddedChannel first = peers.last().accept(V2);
    frames(first);
    setWritable(first, false);
    send("b");
    first.close();
    settle();
    assertThat(takeEvents()).endsWith("ended");
    assertThat(peers.opens).hasSize(2);
    assertThat(frames(peers.last().accept(V2))).containsExactly("b@" + V2);
  }

  @Test
  void withoutKeepQueueOnEnd_theQueueShouldEndWithTheStream() {
    streams(4, 1_000, true, false, null);
    send("a");
    final EmbeddedChannel first = peers.last().accept(V2);
    setWritable(first, false);
    send("b", "c");
    first.close();
    settle();
    assertThat(takeEvents()).endsWith("dropped b STREAM_ENDED", "dropped c STREAM_ENDED",
        "ended");
    assertThat(peers.opens).hasSize(1);
    assertThat(streams.isOpen(peer)).isFalse();
  }

  // --- idle streams ---------------------------------------------------------------------------

  @Test
  void closeIdle_shouldCloseStreamsUnusedForTheIdleTimeout_thatAreNotBusy() {
    streams();
    send("a");
    final EmbeddedChannel stream = peers.last().accept(V2);
    advance(Duration.ofSeconds(20));
    // A write is a use: the idle time counts from it.
    send("b");
    advance(Duration.ofSeconds(30));
    streams.closeIdle(p -> false);
    assertThat(stream.isOpen()).isTrue();

    advance(Duration.ofMillis(1));
    streams.closeIdle(p -> true);
    assertThat(stream.isOpen()).as("busy peer").isTrue();
    streams.closeIdle(p -> false);
    settle();
    assertThat(stream.isOpen()).isFalse();
    assertThat(streams.isOpen(peer)).isFalse();
    // Let go on purpose: not reported as an end; the next message opens a new stream.
    assertThat(events).doesNotContain("ended");
    send("c");
    assertThat(peers.opens).hasSize(2);
  }

  @Test
  void closeIdle_shouldKeepAStreamWithQueuedMessages_andDoNothingWithoutAnIdleTimeout() {
    streams();
    send("a");
    final EmbeddedChannel stream = peers.last().accept(V2);
    setWritable(stream, false);
    send("b");
    advance(Duration.ofMinutes(5));
    streams.closeIdle(p -> false);
    assertThat(stream.isOpen()).isTrue();

    final PeerStreams<String> never = streams(4, 1_000, true, true, null);
    never.send(peer, "x");
    settle();
    final EmbeddedChannel other = peers.last().accept(V2);
    advance(Duration.ofDays(1));
    never.closeIdle(p -> false);
    assertThat(other.isOpen()).isTrue();
  }

  // --- optimistic selection after identify ----------------------------------------------------

  @Test
  void aProtocolTheIdentifyListed_shouldBeSelectedOptimistically_andWrittenBeforeTheEcho() {
    streams();
    peers.identified.put(peer, V1);
    send("a");
    final Open open = peers.last();
    assertThat(open.lazy).isTrue();
    assertThat(open.protocols).containsExactly(V1);
    // Usable before the remote answered: what was queued goes out with the proposal.
    assertThat(streams.isOpen(peer)).isTrue();
    assertThat(frames(open.channel)).containsExactly("a@" + V1);
    open.echo();

    // Confirmed: when this stream ends, the next one is optimistic again.
    open.channel.close();
    settle();
    send("b");
    assertThat(peers.last().lazy).isTrue();
  }

  @Test
  void aStaleIdentify_shouldCloseTheOptimisticStream_andNegotiateTheNextOne() {
    streams();
    peers.identified.put(peer, V1);
    send("a");
    final Open lazy = peers.last();
    takeEvents();
    lazy.na();
    assertThat(takeEvents()).containsExactly("openFailed", "ended");
    assertThat(streams.isOpen(peer)).isFalse();

    send("b");
    final Open negotiated = peers.last();
    assertThat(negotiated.lazy).isFalse();
    assertThat(negotiated.protocols).containsExactly(V2, V1);
    final EmbeddedChannel stream = negotiated.accept(V2);
    assertThat(frames(stream)).containsExactly("b@" + V2);

    // A negotiated open that succeeded clears the failure: optimistic once more.
    stream.close();
    settle();
    send("c");
    assertThat(peers.last().lazy).isTrue();
  }

  @Test
  void anOptimisticStreamThatEndsBeforeTheEcho_shouldMakeTheNextOpenNegotiate() {
    streams();
    peers.identified.put(peer, V1);
    send("a");
    peers.last().channel.close();
    settle();
    send("b");
    assertThat(peers.last().lazy).isFalse();
  }

  @Test
  void anOptimisticOpenTheMuxerRefused_shouldCountAsAFailedOpen_andBeRetriedNegotiated() {
    streams();
    peers.identified.put(peer, V1);
    peers.muxerRefuses = true;
    send("a");
    final Open refused = peers.last();
    assertThat(refused.lazy).isTrue();
    refused.fail();
    assertThat(takeEvents()).containsExactly("openFailed");
    assertThat(streams.queuedMessages(peer)).isEqualTo(1);

    peers.muxerRefuses = false;
    advance(REOPEN);
    final Open retry = peers.last();
    assertThat(retry.lazy).isFalse();
    assertThat(frames(retry.accept(V1))).containsExactly("a@" + V1);
  }

  // --- removal --------------------------------------------------------------------------------

  @Test
  void remove_shouldDropThePeersQueue_andCloseItsStream() {
    streams();
    send("a");
    final EmbeddedChannel stream = peers.last().accept(V2);
    setWritable(stream, false);
    send("b");
    takeEvents();
    streams.remove(peer);
    settle();
    assertThat(stream.isOpen()).isFalse();
    assertThat(takeEvents()).containsExactly("dropped b CLOSED");
    assertThat(streams.isOpen(peer)).isFalse();
  }

  @Test
  void closeAll_shouldCloseEveryStream_andDropLaterSends() {
    streams();
    final PeerId other = peer();
    peers.connected.add(other);
    send("a");
    final EmbeddedChannel first = peers.last().accept(V2);
    streams.send(other, "b");
    settle();
    final EmbeddedChannel second = peers.last().accept(V2);
    takeEvents();
    streams.closeAll();
    settle();
    assertThat(first.isOpen()).isFalse();
    assertThat(second.isOpen()).isFalse();
    send("c");
    assertThat(takeEvents()).containsExactly("dropped c CLOSED");
    assertThat(peers.opens).hasSize(2);
  }
}
