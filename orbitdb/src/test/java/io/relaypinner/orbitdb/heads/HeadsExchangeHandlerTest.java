package io.relaypinner.orbitdb.heads;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.JsDump;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class HeadsExchangeHandlerTest {
  private static final PeerId PEER = Keys.generate(KeyType.ED25519, new SecureRandom())
      .publicKey().peerId();
  private static final JsDump DUMP = JsDump.resource("orbitdb-vectors-stack-b.json");

  private final List<byte[]> received = new ArrayList<>();
  private final Map<String, Integer> counters = new ConcurrentHashMap<>();
  private List<byte[]> ours = List.of();
  private HeadsExchangeHandler handler;

  private EmbeddedChannel channel(final HeadsConfig config) {
    final HeadsEndpoint endpoint = new HeadsEndpoint() {
      @Override
      public CompletableFuture<List<byte[]>> heads() {
        return CompletableFuture.completedFuture(ours);
      }

      @Override
      public void onHead(final byte[] block, final PeerId from) {
        assertThat(from).isEqualTo(PEER);
        received.add(block);
      }
    };
    handler = new HeadsExchangeHandler(endpoint, PEER, config,
        name -> counters.merge(name, 1, Integer::sum));
    // Time frozen before the handler starts its timers: only advanceTimeBy moves it, so a slow
    // machine cannot make a timer due early (the wall clock kept running between steps before).
    final EmbeddedChannel ch = new EmbeddedChannel();
    ch.freezeTime();
    ch.pipeline().addLast(handler);
    return ch;
  }

  private static byte[] entry(final int i) {
    return DUMP.block(DUMP.db("events-pk").entries().get(i).get("hash").asText());
  }

  private static byte[] concat(final byte[]... parts) {
    int n = 0;
    for (final byte[] p : parts) {
      n += p.length;
    }
    final byte[] out = new byte[n];
    int at = 0;
    for (final byte[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }

  private static List<byte[]> outbound(final EmbeddedChannel ch) {
    final List<byte[]> out = new ArrayList<>();
    ByteBuf buf;
    while ((buf = ch.readOutbound()) != null) {
      final byte[] bytes = new byte[buf.readableBytes()];
      buf.readBytes(bytes);
      buf.release();
      out.add(bytes);
    }
    return out;
  }

  private static void fin(final EmbeddedChannel ch) {
    ch.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
    ch.runPendingTasks();
  }

  @Test
  void read_shouldSplitBackToBackEntries_whenPeerFramesWereMerged() {
    final EmbeddedChannel ch = channel(HeadsConfig.DEFAULT);
    ch.writeInbound(Unpooled.wrappedBuffer(concat(entry(0), entry(1), entry(2))));
    fin(ch);
    assertThat(received).hasSize(3);
    assertThat(received.get(1)).isEqualTo(entry(1));
    assertThat(handler.result()).isCompletedWithValueMatching(r -> r.completed()
        && r.received() == 3);
  }

  @Test
  void read_shouldJoinPieces_whenOneEntryIsSplitAcrossFrames() {
    final EmbeddedChannel ch = channel(HeadsConfig.DEFAULT);
    final byte[] e = entry(2);
    final int a = e.length / 3;
    ch.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOfRange(e, 0, a)));
    ch.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOfRange(e, a, 2 * a)));
    assertThat(received).isEmpty();
    ch.writeInbound(Unpooled.wrappedBuffer(concat(Arrays.copyOfRange(e, 2 * a, e.length),
        entry(0))));
    fin(ch);
    assertThat(received).hasSize(2);
    assertThat(received.get(0)).isEqualTo(e);
    assertThat(received.get(1)).isEqualTo(entry(0));
  }

  @Test
  void send_shouldWriteTheFirstHeadAtOnce_andTheRestAfterThePeersFirstBytes() {
    ours = List.of(entry(1), entry(2));
    final EmbeddedChannel ch = channel(HeadsConfig.DEFAULT);
    ch.runPendingTasks();
    // One frame cannot be merged with another by js-libp2p 3: it goes before the peer speaks.
    final List<byte[]> first = outbound(ch);
    assertThat(first).hasSize(1);
    assertThat(first.get(0)).isEqualTo(entry(1));
    ch.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOf(entry(0), 5)));
    ch.runPendingTasks();
    final List<byte[]> frames = outbound(ch);
    assertThat(frames).hasSize(1);
    assertThat(frames.get(0)).isEqualTo(entry(2));
    assertThat(counters).containsEntry("heads-sent", 2);
  }

  @Test
  void send_shouldWriteASingleHeadAndFinAtOnce_toAReaderThatSaysNothing() {
    ours = List.of(entry(0));
    final EmbeddedChannel ch = channel(HeadsConfig.DEFAULT);
    ch.runPendingTasks();
    assertThat(outbound(ch)).hasSize(1);
    // Our side is done without any wait; the stream completes when the peer's FIN comes.
    fin(ch);
    assertThat(handler.result()).isCompletedWithValueMatching(r -> r.completed()
        && r.sent() == 1 && r.received() == 0);
  }

  @Test
  void send_shouldStart_whenPeerFinsWithoutHeads() {
    ours = List.of(entry(0));
    final EmbeddedChannel ch = channel(HeadsConfig.DEFAULT);
    fin(ch);
    assertThat(outbound(ch)).hasSize(1);
    assertThat(handler.result()).isCompletedWithValueMatching(r -> r.completed()
        && r.sent() == 1 && r.received() == 0);
  }

  @Test
  void send_shouldStartAfterDelay_whenPeerSendsNothing() {
    ours = List.of(entry(0), entry(1));
    final EmbeddedChannel ch = channel(HeadsConfig.DEFAULT);
    ch.runPendingTasks();
    assertThat(outbound(ch)).hasSize(1);
    ch.advanceTimeBy(HeadsConfig.DEFAULT.sendDelay().toMillis() - 1, TimeUnit.MILLISECONDS);
    ch.runPendingTasks();
    assertThat(outbound(ch)).isEmpty();
    ch.advanceTimeBy(1, TimeUnit.MILLISECONDS);
    ch.runPendingTasks();
    ch.runPendingTasks(); // the write the timer handed to the event loop
    assertThat(outbound(ch)).hasSize(1);
  }

  @Test
  void read_shouldCloseStream_whenBytesAreGarbage() {
    final EmbeddedChannel ch = channel(HeadsConfig.DEFAULT);
    // 0x9f starts an indefinite-length array, which DAG-CBOR forbids.
    ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {(byte) 0x9f, 0x01, (byte) 0xff}));
    assertThat(ch.isOpen()).isFalse();
    assertThat(received).isEmpty();
    assertThat(counters).containsEntry("closed-malformed", 1);
    assertThat(handler.result()).isCompletedWithValueMatching(r -> "malformed"
        .equals(r.failure()));
  }

  @Test
  void read_shouldCloseStream_whenEntryExceedsLimit() {
    final EmbeddedChannel ch = channel(HeadsConfig.DEFAULT);
    // A byte string header announcing 1 MiB, then 300 KiB of it.
    ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {0x5a, 0x00, 0x10, 0x00, 0x00}));
    for (int i = 0; i < 30 && ch.isOpen(); i++) {
      ch.writeInbound(Unpooled.wrappedBuffer(new byte[10 * 1024]));
    }
    assertThat(ch.isOpen()).isFalse();
    assertThat(counters).containsEntry("closed-oversized", 1);
  }

  @Test
  void read_shouldCloseStream_whenFinCutsAnEntry() {
    final EmbeddedChannel ch = channel(HeadsConfig.DEFAULT);
    ch.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOf(entry(0), 20)));
    fin(ch);
    assertThat(ch.isOpen()).isFalse();
    assertThat(counters).containsEntry("closed-malformed", 1);
  }

  @Test
  void read_shouldCloseStream_whenTooManyHeads() {
    final EmbeddedChannel ch = channel(new HeadsConfig(256 * 1024, 2, Duration.ofSeconds(2),
        Duration.ofSeconds(30)));
    ch.writeInbound(Unpooled.wrappedBuffer(concat(entry(0), entry(1), entry(2))));
    assertThat(received).hasSize(2);
    assertThat(ch.isOpen()).isFalse();
    assertThat(counters).containsEntry("closed-too-many-heads", 1);
  }

  @Test
  void timeout_shouldCloseStream_whenPeerNeverFinishes() {
    final EmbeddedChannel ch = channel(HeadsConfig.DEFAULT);
    ch.advanceTimeBy(HeadsConfig.DEFAULT.timeout().toMillis(), TimeUnit.MILLISECONDS);
    ch.runPendingTasks();
    assertThat(ch.isOpen()).isFalse();
    assertThat(counters).containsEntry("closed-timeout", 1);
  }

  @Test
  void scanner_shouldReportIncompleteOrThrow_whenContainerCountExceedsBytes() {
    // An array announcing 65,536 items with two bytes behind it: incomplete, nothing allocated.
    final byte[] bytes = {(byte) 0x9a, 0x00, 0x01, 0x00, 0x00, 0x61, 0x61};
    assertThat(CborItemScanner.itemLength(bytes, 0, bytes.length)).isEqualTo(-1);
    // A map announcing 2^31 - 1 entries can never be an entry.
    final byte[] huge = {(byte) 0xba, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x61, 0x61};
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> CborItemScanner.itemLength(huge, 0,
        huge.length)).isInstanceOf(io.relaypinner.libp2p.core.ProtocolViolationException.class);
    assertThat(CborItemScanner.itemLength(entry(0), 0, entry(0).length))
        .isEqualTo(entry(0).length);
  }
}
