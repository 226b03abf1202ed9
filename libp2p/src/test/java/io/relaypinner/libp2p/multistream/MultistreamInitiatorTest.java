package io.relaypinner.libp2p.multistream;

import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.HEADER;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.HEADS_ID;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.NA;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.NOISE;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.TLS;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.YAMUX;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.bytes;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.failure;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.inboundHex;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.message;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.outboundHex;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.outboundWrites;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.NoSuchProtocolException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.multistream.MultistreamTestSupport.Recorder;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MultistreamInitiatorTest {
  private final List<String> installed = new ArrayList<>();
  private final Recorder app = new Recorder();
  private final ProtocolInstaller installer = (channel, protocol) -> {
    installed.add(protocol);
    channel.pipeline().addLast(app);
  };
  private EmbeddedChannel channel;

  private MultistreamInitiator newInitiator(final String... protocols) {
    final MultistreamInitiator initiator = new MultistreamInitiator(List.of(protocols), installer);
    channel = new EmbeddedChannel();
    channel.freezeTime();
    channel.pipeline().addLast(initiator);
    return initiator;
  }

  @AfterEach
  void releaseEverything() {
    if (channel != null) {
      channel.finishAndReleaseAll();
    }
  }

  private void assertClosedWith(
      final MultistreamInitiator initiator, final Class<? extends Throwable> type) {
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
    assertThat(failure(initiator.result())).isInstanceOf(type);
    assertThat(installed).isEmpty();
  }

  @Test
  void handlerAdded_shouldWriteHeaderAndFirstProposalInOneWrite_likeJs() {
    final MultistreamInitiator initiator = newInitiator("/noise", "/tls/1.0.0");

    assertThat(outboundWrites(channel)).containsExactly(
        "132f6d756c746973747265616d2f312e302e300a" + "072f6e6f6973650a");
    assertThat(initiator.result()).isNotDone();
    assertThat(initiator.isLazy()).isFalse();
    assertThat(initiator.protocols()).containsExactly("/noise", "/tls/1.0.0");
  }

  @Test
  void channelRead_shouldSelect_whenEchoesArriveInSeparateWritesLikeJsHandle() {
    final MultistreamInitiator initiator = newInitiator("/noise");
    outboundHex(channel);

    // js-libp2p's handle() awaits one write per answer.
    channel.writeInbound(bytes(HEADER));
    assertThat(initiator.result()).isNotDone();
    channel.writeInbound(bytes(NOISE));

    assertThat(initiator.result()).isCompletedWithValue("/noise");
    assertThat(installed).containsExactly("/noise");
    assertThat(channel.pipeline().get(MultistreamInitiator.class)).isNull();
    assertThat(outboundHex(channel)).isEmpty();
  }

  @Test
  void channelRead_shouldForwardLeftover_whenEchoAndAppDataArriveInOneRead() {
    final MultistreamInitiator initiator = newInitiator("/yamux/1.0.0");
    outboundHex(channel);

    channel.writeInbound(bytes(HEADER + YAMUX + "000100000000000100000000"));

    assertThat(initiator.result()).isCompletedWithValue("/yamux/1.0.0");
    assertThat(app.seen.toString()).isEqualTo("000100000000000100000000");
    assertThat(inboundHex(channel)).isEqualTo("000100000000000100000000");
  }

  @Test
  void channelRead_shouldReassemble_whenAnswerArrivesByteByByte() {
    final MultistreamInitiator initiator = newInitiator("/noise");
    outboundHex(channel);

    for (final byte b : HexFormat.of().parseHex(HEADER + NOISE + "ee")) {
      channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
    }

    assertThat(initiator.result()).isCompletedWithValue("/noise");
    assertThat(inboundHex(channel)).isEqualTo("ee");
  }

  @Test
  void channelRead_shouldProposeNext_whenAnsweredNa() {
    final MultistreamInitiator initiator = newInitiator("/tls/1.0.0", "/noise");
    assertThat(outboundHex(channel)).isEqualTo(HEADER + TLS);

    channel.writeInbound(bytes(HEADER + NA));
    assertThat(outboundWrites(channel)).containsExactly(NOISE);
    assertThat(initiator.result()).isNotDone();

    channel.writeInbound(bytes(NOISE));
    assertThat(initiator.result()).isCompletedWithValue("/noise");
    assertThat(installed).containsExactly("/noise");
  }

  @Test
  void channelRead_shouldFailWithNoSuchProtocol_whenEveryProposalAnsweredNa() {
    final MultistreamInitiator initiator = newInitiator("/tls/1.0.0", "/noise");
    outboundHex(channel);

    channel.writeInbound(bytes(HEADER + NA + NA));

    assertThat(outboundHex(channel)).isEqualTo(NOISE);
    assertClosedWith(initiator, NoSuchProtocolException.class);
    assertThat(failure(initiator.result())).hasMessageContaining("[/tls/1.0.0, /noise]");
  }

  @Test
  void channelRead_shouldClose_whenAnswerIsNotTheHeader() {
    final MultistreamInitiator initiator = newInitiator("/noise");

    channel.writeInbound(bytes(NOISE + HEADER));

    assertClosedWith(initiator, ProtocolViolationException.class);
  }

  @Test
  void channelRead_shouldClose_whenAnswerIsAnotherProtocol() {
    final MultistreamInitiator initiator = newInitiator("/noise");

    channel.writeInbound(bytes(HEADER + YAMUX));

    assertClosedWith(initiator, ProtocolViolationException.class);
    assertThat(failure(initiator.result())).hasMessageContaining("\"/yamux/1.0.0\"");
  }

  @Test
  void channelRead_shouldClose_whenAnswerTooLong() {
    final MultistreamInitiator initiator = newInitiator("/noise");

    channel.writeInbound(bytes(HEADER + "8108"));

    assertClosedWith(initiator, ProtocolViolationException.class);
  }

  @Test
  void channelRead_shouldClose_whenAnswerLacksNewline() {
    final MultistreamInitiator initiator = newInitiator("/noise");

    channel.writeInbound(bytes(HEADER + "072f6e6f69736520"));

    assertClosedWith(initiator, ProtocolViolationException.class);
  }

  @Test
  void write_shouldHoldApplicationWrites_untilEagerSelectionSucceeds() {
    final MultistreamInitiator initiator = newInitiator("/noise");
    outboundHex(channel);

    final ChannelFuture early = channel.writeAndFlush(bytes("aa01"));
    final ChannelFuture later = channel.writeAndFlush(bytes("bb02"));
    assertThat(outboundWrites(channel)).isEmpty();
    assertThat(early.isDone()).isFalse();

    channel.writeInbound(bytes(HEADER + NOISE));

    assertThat(initiator.result()).isCompletedWithValue("/noise");
    assertThat(outboundWrites(channel)).containsExactly("aa01", "bb02");
    assertThat(early.isSuccess()).isTrue();
    assertThat(later.isSuccess()).isTrue();
  }

  @Test
  void write_shouldFailHeldWrites_whenEagerSelectionFails() {
    final MultistreamInitiator initiator = newInitiator("/noise");
    outboundHex(channel);
    final ChannelFuture early = channel.writeAndFlush(bytes("aa01"));

    channel.writeInbound(bytes(HEADER + NA));

    assertClosedWith(initiator, NoSuchProtocolException.class);
    assertThat(early.cause()).isInstanceOf(NoSuchProtocolException.class);
    assertThat(outboundWrites(channel)).isEmpty();
  }

  @Test
  void lazy_shouldLetApplicationWriteBehindProposal_beforeAnyAnswer() {
    final MultistreamInitiator initiator = MultistreamInitiator.lazy(HEADS_ID);
    final Recorder lazyApp = new Recorder("a56474797065");
    channel = new EmbeddedChannel(initiator, lazyApp);

    assertThat(outboundWrites(channel)).containsExactly(HEADER + message(HEADS_ID), "a56474797065");
    assertThat(initiator.isLazy()).isTrue();
    assertThat(initiator.result()).isNotDone();

    // Nothing reaches the application before the echo; what follows the echo does.
    channel.writeInbound(bytes(HEADER));
    assertThat(lazyApp.seen.toString()).isEmpty();
    channel.writeInbound(bytes(message(HEADS_ID) + "a1626964"));

    assertThat(initiator.result()).isCompletedWithValue(HEADS_ID);
    assertThat(lazyApp.seen.toString()).isEqualTo("a1626964");
    assertThat(channel.pipeline().get(MultistreamInitiator.class)).isNull();
    assertThat(inboundHex(channel)).isEqualTo("a1626964");
  }

  @Test
  void lazy_shouldPassWritesThrough_whileAnswerOutstanding() {
    final MultistreamInitiator initiator = MultistreamInitiator.lazy("/ipfs/id/push/1.0.0");
    channel = new EmbeddedChannel(initiator);
    outboundHex(channel);

    channel.writeAndFlush(bytes("0a00"));

    assertThat(outboundWrites(channel)).containsExactly("0a00");
    assertThat(initiator.result()).isNotDone();
  }

  @Test
  void lazy_shouldCloseBeforeApplicationReadsAnything_whenAnsweredNa() {
    final MultistreamInitiator initiator = MultistreamInitiator.lazy(HEADS_ID);
    final Recorder lazyApp = new Recorder("a56474797065");
    channel = new EmbeddedChannel(initiator, lazyApp);
    outboundHex(channel);

    channel.writeInbound(bytes(HEADER + NA + "ffff"));

    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
    assertThat(failure(initiator.result())).isInstanceOf(NoSuchProtocolException.class);
    assertThat(lazyApp.seen.toString()).isEmpty();
    assertThat(inboundHex(channel)).isEmpty();
  }

  @Test
  void timeout_shouldCloseChannel_whenNoAnswerWithinTimeout() {
    final MultistreamInitiator initiator = newInitiator("/noise");
    channel.writeInbound(bytes(HEADER));

    channel.advanceTimeBy(9_999, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(channel.isOpen()).isTrue();

    channel.advanceTimeBy(1, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertClosedWith(initiator, NegotiationTimeoutException.class);
  }

  @Test
  void channelInactive_shouldFailResult_whenClosedBeforeAnswer() {
    final MultistreamInitiator initiator = newInitiator("/noise");

    channel.close();

    assertClosedWith(initiator, ClosedChannelException.class);
  }

  @Test
  void userEventTriggered_shouldFailHeldWrites_whenRemoteHalfClosesBeforeEcho() {
    final MultistreamInitiator initiator = newInitiator("/noise");
    channel.writeInbound(bytes(HEADER));
    final ChannelFuture early = channel.writeAndFlush(bytes("aa01"));

    channel.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);

    assertClosedWith(initiator, ProtocolViolationException.class);
    assertThat(early.cause()).isInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void install_shouldCloseChannel_whenInstallerThrows() {
    final MultistreamInitiator initiator = new MultistreamInitiator(List.of("/noise"),
        (ch, protocol) -> {
          throw new IllegalStateException("boom");
        });
    channel = new EmbeddedChannel(initiator);

    channel.writeInbound(bytes(HEADER + NOISE + "0102"));

    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
    assertThat(failure(initiator.result())).isInstanceOf(InternalErrorException.class);
    assertThat(inboundHex(channel)).isEmpty();
  }

  @Test
  void constructor_shouldReject_whenProposalsInvalid() {
    assertThatThrownBy(() -> new MultistreamInitiator(List.of(), installer))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new MultistreamInitiator(List.of("na"), installer))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> MultistreamInitiator.lazy("/a\n/b"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> MultistreamInitiator.lazy("/" + "x".repeat(1023)))
        .isInstanceOf(IllegalArgumentException.class);
    final MultistreamConfig small = MultistreamConfig.builder().maxMessageLength(32).build();
    assertThatThrownBy(
            () -> new MultistreamInitiator(List.of("/" + "x".repeat(31)), installer, small))
        .isInstanceOf(IllegalArgumentException.class);
    final MultistreamConfig few = MultistreamConfig.builder().maxProposals(1).build();
    assertThatThrownBy(() -> new MultistreamInitiator(List.of("/a", "/b"), installer, few))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void channelRead_shouldOnlyEverCloseChannel_whenAnswersAreRandom() {
    final Random random = new Random(0x696e6974L);
    for (int round = 0; round < 2_000; round++) {
      final MultistreamInitiator initiator =
          new MultistreamInitiator(List.of("/tls/1.0.0", "/noise"), ProtocolInstaller.NONE);
      final EmbeddedChannel ch = new EmbeddedChannel(initiator);
      final byte[] noise = new byte[random.nextInt(64)];
      random.nextBytes(noise);
      final byte[] prefix = round % 2 == 0 ? new byte[0] : HexFormat.of().parseHex(HEADER);
      final ByteBuf wire = Unpooled.wrappedBuffer(prefix, noise);
      while (wire.isReadable() && ch.isOpen()) {
        final int chunk = 1 + random.nextInt(Math.min(8, wire.readableBytes()));
        ch.writeInbound(wire.readRetainedSlice(chunk));
        ch.runPendingTasks();
      }
      wire.release();
      ch.runPendingTasks();
      ch.checkException();
      final CompletableFuture<String> result = initiator.result();
      if (ch.isOpen()) {
        assertThat(result.isCompletedExceptionally()).as("round %d", round).isFalse();
      } else {
        assertThat(failure(result)).as("round %d", round)
            .isInstanceOfAny(ProtocolViolationException.class, NoSuchProtocolException.class);
      }
      ch.finishAndReleaseAll();
    }
  }
}
