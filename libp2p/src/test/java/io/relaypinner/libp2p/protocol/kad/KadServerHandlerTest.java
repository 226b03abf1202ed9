package io.relaypinner.libp2p.protocol.kad;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.multiformats.Uvarint;
import io.relaypinner.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The server side of a {@code /ipfs/kad/1.0.0} stream, byte by byte on an EmbeddedChannel. */
class KadServerHandlerTest {
  private final Random random = new Random(13);
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-29T00:00:00Z"));
  private final PeerId self = KadTestPeers.random(random);
  private final PeerId remote = KadTestPeers.random(random);
  private final KadConfig config = KadConfig.builder().streamIdleTimeout(Duration.ofSeconds(30))
      .build();
  private final RoutingTable table = new RoutingTable(self, 20, clock);
  private final KadServerEngine engine = new KadServerEngine(config, clock, table,
      new ProviderStore(config, clock, Scope.root("dht", Limits.NONE, LimitListener.NONE)),
      peer -> List.of(Multiaddr.parse("/ip4/192.0.2.1/tcp/4001")), List::of);
  private final EmbeddedChannel channel = new EmbeddedChannel();

  @AfterEach
  void close() {
    channel.finishAndReleaseAll();
  }

  private static ByteBuf framed(final KadMessage message) {
    final byte[] bytes = KadCodec.encode(message);
    final ByteBuf out = Unpooled.buffer();
    final byte[] prefix = new byte[Uvarint.size(bytes.length)];
    Uvarint.write(bytes.length, prefix, 0);
    return out.writeBytes(prefix).writeBytes(bytes);
  }

  private KadMessage readAnswer() {
    final ByteBuf frame = channel.readOutbound();
    assertThat(frame).isNotNull();
    try {
      final byte[] bytes = ByteBufUtil.getBytes(frame);
      final int length = (int) Uvarint.read(bytes, 0, bytes.length);
      final int start = Uvarint.size(length);
      return KadCodec.decode(Arrays.copyOfRange(bytes, start, start + length),
          config.codecLimits());
    } finally {
      frame.release();
    }
  }

  @Test
  void requests_shouldBeAnsweredInTurn_onOneStream_whenSplitAcrossReads() {
    for (int i = 0; i < 30; i++) {
      table.offer(KadTestPeers.random(random));
    }
    KadServerHandler.install(channel, engine, remote);
    final ByteBuf both = Unpooled.wrappedBuffer(
        framed(KadMessage.request(KadMessage.Type.PING, new byte[0])),
        framed(KadMessage.request(KadMessage.Type.FIND_NODE, KadTestPeers.contentKey(random))));

    channel.writeInbound(both.readRetainedSlice(5));
    channel.writeInbound(both);

    assertThat(readAnswer().type()).isEqualTo(KadMessage.Type.PING);
    assertThat(readAnswer().closerPeers()).hasSize(20);
    assertThat(channel.isActive()).isTrue();
  }

  @Test
  void oversizedOrMalformedRequests_shouldCloseTheStream_andBeCounted() {
    KadServerHandler.install(channel, engine, remote);
    final byte[] prefix = new byte[Uvarint.size(config.maxRequestSize() + 1L)];
    Uvarint.write(config.maxRequestSize() + 1L, prefix, 0);

    channel.writeInbound(Unpooled.wrappedBuffer(prefix));

    assertThat(channel.isActive()).isFalse();
    assertThat((Object) channel.readOutbound()).isNull();
    final EmbeddedChannel garbage = new EmbeddedChannel();
    KadServerHandler.install(garbage, engine, remote);
    garbage.writeInbound(Unpooled.wrappedBuffer(new byte[] {3, 0x12, 0x7f, 0x01}));
    assertThat(garbage.isActive()).isFalse();
    garbage.finishAndReleaseAll();
    assertThat(engine.counters()).containsEntry("refused_malformed", 2L);
  }

  @Test
  void putValue_shouldCloseTheStreamUnanswered() {
    KadServerHandler.install(channel, engine, remote);

    channel.writeInbound(framed(KadMessage.request(KadMessage.Type.PUT_VALUE,
        "/ipns/k".getBytes())));

    assertThat((Object) channel.readOutbound()).isNull();
    assertThat(channel.isActive()).isFalse();
  }

  @Test
  void idleStream_shouldBeClosed_afterTheIdleTimeout() {
    KadServerHandler.install(channel, engine, remote);
    channel.writeInbound(framed(KadMessage.request(KadMessage.Type.PING, new byte[0])));
    readAnswer();

    channel.advanceTimeBy(29, TimeUnit.SECONDS);
    channel.runScheduledPendingTasks();
    assertThat(channel.isActive()).isTrue();
    channel.advanceTimeBy(2, TimeUnit.SECONDS);
    channel.runScheduledPendingTasks();

    assertThat(channel.isActive()).isFalse();
  }
}
