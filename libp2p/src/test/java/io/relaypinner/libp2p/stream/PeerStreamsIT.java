package io.relaypinner.libp2p.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.netty.UvarintFrameDecoder;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link PeerStreams} between two hosts on 127.0.0.1 (TCP, Noise, yamux). */
class PeerStreamsIT {
  private static final Duration WAIT = Duration.ofSeconds(15);
  private static final String PROTOCOL = "/relay-pinner/test/peer-streams/1.0.0";
  private final SecureRandom random = new SecureRandom();
  private final EventLoops loops = EventLoops.create(2, "peer-streams-it");
  private final List<Host> hosts = new CopyOnWriteArrayList<>();
  /** Messages (their first int) the reader got, in order. */
  private final List<Integer> received = new CopyOnWriteArrayList<>();
  private final AtomicInteger inboundStreams = new AtomicInteger();
  private final List<Channel> inbound = new CopyOnWriteArrayList<>();
  private volatile boolean reading = true;

  /** Messages are an int id padded to a size. */
  private record Message(int id, int size, boolean important) {}

  private final class Recorder implements PeerStreams.Events<Message> {
    private final Map<PeerStreams.Drop, AtomicLong> dropped = new ConcurrentHashMap<>();
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong opened = new AtomicLong();
    private final AtomicLong openFailed = new AtomicLong();
    private final AtomicLong ended = new AtomicLong();
    private final AtomicLong drained = new AtomicLong();

    @Override
    public void opened(final PeerId peer, final String protocol) {
      opened.incrementAndGet();
    }

    @Override
    public void openFailed(final PeerId peer, final Throwable cause) {
      openFailed.incrementAndGet();
    }

    @Override
    public void ended(final PeerId peer) {
      ended.incrementAndGet();
    }

    @Override
    public void drained(final PeerId peer) {
      drained.incrementAndGet();
    }

    @Override
    public void written(final PeerId peer, final Message message) {
      written.incrementAndGet();
    }

    @Override
    public void dropped(final PeerId peer, final Message message, final PeerStreams.Drop reason) {
      dropped.computeIfAbsent(reason, r -> new AtomicLong()).incrementAndGet();
    }

    long dropped(final PeerStreams.Drop reason) {
      return dropped.getOrDefault(reason, new AtomicLong()).get();
    }
  }

  private static final class Policy implements PeerStreams.Policy<Message> {
    private final PeerStreams.Overflow overflow;

    Policy(final PeerStreams.Overflow overflow) {
      this.overflow = overflow;
    }

    @Override
    public byte[] encode(final Message message, final String protocol) {
      return ByteBuffer.allocate(message.size()).putInt(message.id()).array();
    }

    @Override
    public int size(final Message message) {
      return message.size();
    }

    @Override
    public PeerStreams.Overflow overflow(final Message message) {
      return message.important() ? PeerStreams.Overflow.ACCEPT : overflow;
    }
  }

  @AfterEach
  void close() {
    hosts.forEach(Host::close);
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Host host(final boolean speaks) throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/test").build(), loops, Clock.systemUTC());
    hosts.add(host);
    host.start().get(5, TimeUnit.SECONDS);
    if (speaks) {
      host.protocols().register(PROTOCOL, (channel, protocol) -> {
        inboundStreams.incrementAndGet();
        inbound.add(channel);
        channel.config().setAutoRead(reading);
        channel.pipeline().addLast(new UvarintFrameDecoder(1024 * 1024));
        channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            try {
              received.add(((ByteBuf) msg).getInt(((ByteBuf) msg).readerIndex()));
            } finally {
              ReferenceCountUtil.release(msg);
            }
          }
        });
      });
    }
    return host;
  }

  private static <T> T on(final EventExecutor loop, final Callable<T> task) throws Exception {
    return loop.submit(task).get(10, TimeUnit.SECONDS);
  }

  private static PeerStreams.Options options(final int maxMessages, final long maxBytes,
      final boolean openOnSend) {
    return new PeerStreams.Options("test", List.of(PROTOCOL), maxMessages, maxBytes, openOnSend,
        false, 3, Duration.ofMillis(50), null, true);
  }

  private void connect(final Host from, final Host to) throws Exception {
    from.dial(to.listenAddresses().get(0).withPeerId(to.peerId())).get(10, TimeUnit.SECONDS);
  }

  @Test
  void send_shouldOpenOneStream_andDeliverEveryMessageInOrder() throws Exception {
    final Host sender = host(false);
    final Host reader = host(true);
    connect(sender, reader);
    final EventExecutor loop = loops.group().next();
    final Recorder events = new Recorder();
    final PeerStreams<Message> streams = new PeerStreams<>(sender, loop,
        options(16, 1 << 20, true), new Policy(PeerStreams.Overflow.DROP_NEW), events);
    on(loop, () -> {
      streams.open(reader.peerId());
      return null;
    });
    await().atMost(WAIT).until(() -> on(loop, () -> streams.isOpen(reader.peerId())));

    on(loop, () -> {
      for (int i = 0; i < 100; i++) {
        streams.send(reader.peerId(), new Message(i, 100, false));
      }
      return null;
    });

    await().atMost(WAIT).until(() -> received.size() == 100);
    assertThat(received).isSorted().doesNotHaveDuplicates();
    assertThat(inboundStreams.get()).isEqualTo(1);
    await().atMost(WAIT).until(() -> events.written.get() == 100);
    assertThat(events.opened.get()).isEqualTo(1);
    assertThat(events.dropped).isEmpty();
  }

  @Test
  void send_shouldOpenOptimistically_whenIdentifyListedTheProtocol() throws Exception {
    final Host sender = host(false);
    final Host reader = host(true);
    final Connection connection = sender.dial(
        reader.listenAddresses().get(0).withPeerId(reader.peerId())).get(10, TimeUnit.SECONDS);
    sender.identify(connection).get(10, TimeUnit.SECONDS);
    assertThat(sender.knownProtocol(reader.peerId(), List.of(PROTOCOL))).contains(PROTOCOL);
    final EventExecutor loop = loops.group().next();
    final Recorder events = new Recorder();
    final PeerStreams<Message> streams = new PeerStreams<>(sender, loop,
        options(128, 1 << 20, true), new Policy(PeerStreams.Overflow.DROP_NEW), events);

    // No open first: the messages go out with the proposal.
    on(loop, () -> {
      for (int i = 0; i < 50; i++) {
        streams.send(reader.peerId(), new Message(i, 100, false));
      }
      return null;
    });

    await().atMost(WAIT).until(() -> received.size() == 50);
    assertThat(received).isSorted().doesNotHaveDuplicates();
    assertThat(inboundStreams.get()).isEqualTo(1);
    assertThat(events.opened.get()).isEqualTo(1);
    assertThat(events.openFailed.get()).isZero();
    assertThat(events.dropped).isEmpty();
  }

  @Test
  void send_shouldNegotiateAgain_whenAnOptimisticSelectionIsRefused() throws Exception {
    final String gone = "/relay-pinner/test/peer-streams/2.0.0";
    final Host sender = host(false);
    final Host reader = host(true);
    final Connection connection = sender.dial(
        reader.listenAddresses().get(0).withPeerId(reader.peerId())).get(10, TimeUnit.SECONDS);
    // The connection's own identify first: finishing after the stale list below, it replaced it.
    sender.identify(connection).get(10, TimeUnit.SECONDS);
    // A stale identify: the reader no longer speaks the protocol we prefer.
    sender.peerStore().update(reader.peerId(), null, null, List.of(gone, PROTOCOL), null);
    final EventExecutor loop = loops.group().next();
    final Recorder events = new Recorder();
    final PeerStreams<Message> streams = new PeerStreams<>(sender, loop,
        new PeerStreams.Options("test", List.of(gone, PROTOCOL), 128, 1 << 20, true, true, 3,
            Duration.ofMillis(50), null, true),
        new Policy(PeerStreams.Overflow.DROP_NEW), events);

    on(loop, () -> {
      streams.send(reader.peerId(), new Message(0, 100, false));
      return null;
    });
    // Refused: the lazy stream closes and counts as a failed open; the next open negotiates.
    await().atMost(WAIT).until(() -> events.openFailed.get() >= 1);
    await().atMost(WAIT).until(() -> on(loop, () -> !streams.isOpen(reader.peerId())));
    final AtomicInteger next = new AtomicInteger(1);
    await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> {
      final int id = next.getAndIncrement();
      on(loop, () -> {
        streams.send(reader.peerId(), new Message(id, 100, false));
        return null;
      });
      return !received.isEmpty();
    });
    assertThat(inboundStreams.get()).isEqualTo(1);
    assertThat(received.get(0)).isPositive();
    assertThat(sender.connection(reader.peerId())).isPresent();
  }

  @Test
  void queue_shouldStayWithinItsBound_andReportEveryDrop_whenThePeerDoesNotRead()
      throws Exception {
    reading = false;
    final Host sender = host(false);
    final Host reader = host(true);
    connect(sender, reader);
    final EventExecutor loop = loops.group().next();
    final Recorder events = new Recorder();
    final PeerStreams<Message> streams = new PeerStreams<>(sender, loop,
        options(8, 1 << 20, true), new Policy(PeerStreams.Overflow.DROP_OLDEST), events);
    final int sent = 200;

    for (int i = 0; i < sent; i++) {
      final int id = i;
      on(loop, () -> {
        streams.send(reader.peerId(), new Message(id, 32 * 1024, false));
        return null;
      });
      assertThat(on(loop, () -> streams.queuedMessages(reader.peerId()))).isLessThanOrEqualTo(8);
    }
    assertThat(events.dropped(PeerStreams.Drop.QUEUE_FULL)).isPositive();
    assertThat(on(loop, () -> streams.canSend(reader.peerId()))).isFalse();

    // The reader starts reading: everything not dropped arrives, the queue drains.
    reading = true;
    inbound.forEach(channel -> channel.config().setAutoRead(true));
    await().atMost(WAIT).until(() -> events.written.get()
        + events.dropped(PeerStreams.Drop.QUEUE_FULL) == sent);
    await().atMost(WAIT).until(() -> received.size() == events.written.get());
    await().atMost(WAIT).until(() -> events.drained.get() > 0);
    assertThat(on(loop, () -> streams.canSend(reader.peerId()))).isTrue();
  }

  @Test
  void stream_shouldBeClosed_whenWhatMustNotBeDroppedReachesTwiceTheBound() throws Exception {
    reading = false;
    final Host sender = host(false);
    final Host reader = host(true);
    connect(sender, reader);
    final EventExecutor loop = loops.group().next();
    final Recorder events = new Recorder();
    final PeerStreams<Message> streams = new PeerStreams<>(sender, loop,
        options(1_000, 256 * 1024, true), new Policy(PeerStreams.Overflow.DROP_NEW), events);
    // The stream is open before the flood: a stream still opening has no channel to close, so
    // the hard bound then only drops (the case this test is not about).
    on(loop, () -> {
      streams.open(reader.peerId());
      return null;
    });
    await().atMost(WAIT).until(() -> on(loop, () -> streams.isOpen(reader.peerId())));

    for (int i = 0; i < 200 && events.dropped(PeerStreams.Drop.SLOW_PEER) == 0; i++) {
      final int id = i;
      on(loop, () -> {
        streams.send(reader.peerId(), new Message(id, 32 * 1024, true));
        return null;
      });
    }

    assertThat(events.dropped(PeerStreams.Drop.SLOW_PEER)).isEqualTo(1);
    await().atMost(WAIT).until(() -> events.ended.get() == 1);
    // What was queued goes with the stream (keepQueueOnEnd off), reported.
    assertThat(events.dropped(PeerStreams.Drop.STREAM_ENDED)).isPositive();
    assertThat(on(loop, () -> streams.queuedMessages(reader.peerId()))).isZero();
  }

  @Test
  void send_shouldDropAndReport_whenNoStreamAndOpenOnSendIsOff() throws Exception {
    final Host sender = host(false);
    final Host reader = host(true);
    connect(sender, reader);
    final EventExecutor loop = loops.group().next();
    final Recorder events = new Recorder();
    final PeerStreams<Message> streams = new PeerStreams<>(sender, loop,
        options(8, 1 << 20, false), new Policy(PeerStreams.Overflow.DROP_NEW), events);

    on(loop, () -> {
      streams.send(reader.peerId(), new Message(1, 10, false));
      return null;
    });
    assertThat(events.dropped(PeerStreams.Drop.NO_STREAM)).isEqualTo(1);

    on(loop, () -> {
      streams.open(reader.peerId());
      return null;
    });
    await().atMost(WAIT).until(() -> on(loop, () -> streams.isOpen(reader.peerId())));
    on(loop, () -> {
      streams.send(reader.peerId(), new Message(2, 10, false));
      return null;
    });
    await().atMost(WAIT).until(() -> received.equals(List.of(2)));
  }

  @Test
  void open_shouldRetryThenDropTheQueue_whenThePeerDoesNotSpeakTheProtocol() throws Exception {
    final Host sender = host(false);
    final Host mute = host(false);
    connect(sender, mute);
    final EventExecutor loop = loops.group().next();
    final Recorder events = new Recorder();
    final PeerStreams<Message> streams = new PeerStreams<>(sender, loop,
        options(8, 1 << 20, true), new Policy(PeerStreams.Overflow.DROP_NEW), events);

    on(loop, () -> {
      streams.send(mute.peerId(), new Message(1, 10, false));
      streams.send(mute.peerId(), new Message(2, 10, false));
      return null;
    });

    await().atMost(WAIT).until(() -> events.dropped(PeerStreams.Drop.OPEN_FAILED) == 2);
    assertThat(events.openFailed.get()).isEqualTo(3);
    assertThat(on(loop, () -> streams.queuedMessages(mute.peerId()))).isZero();
  }
}
