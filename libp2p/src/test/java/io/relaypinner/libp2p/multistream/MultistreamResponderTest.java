package io.relaypinner.libp2p.multistream;

import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.HEADER;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.HEADS_ID;
import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.LS;
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

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.multistream.MultistreamTestSupport.Recorder;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MultistreamResponderTest {
  private static final ProtocolMatcher NOISE_AND_YAMUX =
      ProtocolMatcher.exact("/noise", "/yamux/1.0.0");

  /** Installs a {@link Recorder}, remembering each call. */
  private final List<String> installed = new ArrayList<>();
  private final Recorder app = new Recorder();
  private final ProtocolInstaller installer = (channel, protocol) -> {
    installed.add(protocol);
    channel.pipeline().addLast(app);
  };
  private EmbeddedChannel channel;

  private MultistreamResponder newResponder(final ProtocolMatcher matcher) {
    return newResponder(matcher, MultistreamConfig.DEFAULT);
  }

  private MultistreamResponder newResponder(
      final ProtocolMatcher matcher, final MultistreamConfig config) {
    final MultistreamResponder responder = new MultistreamResponder(matcher, installer, config);
    channel = new EmbeddedChannel();
    // Virtual time from before the timer is scheduled, so timeout checks are exact.
    channel.freezeTime();
    channel.pipeline().addLast(responder);
    return responder;
  }

  @AfterEach
  void releaseEverything() {
    if (channel != null) {
      channel.finishAndReleaseAll();
    }
  }

  private void assertClosedWith(
      final MultistreamResponder responder, final Class<? extends Throwable> type) {
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
    final CompletableFuture<String> result = responder.result();
    assertThat(result).isCompletedExceptionally();
    assertThat(failure(result)).isInstanceOf(type);
    assertThat(installed).isEmpty();
  }

  @Test
  void channelRead_shouldAnswerInOneWrite_whenJsSendsHeaderAndProposalInOneWrite() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);
    assertThat(outboundWrites(channel)).isEmpty();

    channel.writeInbound(bytes(HEADER + NOISE));

    assertThat(outboundWrites(channel)).containsExactly(
        "132f6d756c746973747265616d2f312e302e300a" + "072f6e6f6973650a");
    assertThat(installed).containsExactly("/noise");
    assertThat(responder.result()).isCompletedWithValue("/noise");
    assertThat(channel.pipeline().get(MultistreamResponder.class)).isNull();
    assertThat(channel.pipeline().last()).isSameAs(app);
    assertThat(inboundHex(channel)).isEmpty();
    assertThat(channel.isOpen()).isTrue();
  }

  @Test
  void channelRead_shouldForwardAppDataToInstalledHandler_whenDataFollowsProposalInOneRead() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);
    // js 2.x optimistic select: header, proposal and the first application bytes in one chunk.
    // The data starts with 0x00, which a greedy varint framer would take for an empty frame.
    final String appData = "0020" + "ab".repeat(32);

    channel.writeInbound(bytes(HEADER + YAMUX + appData));

    assertThat(outboundHex(channel)).isEqualTo(HEADER + YAMUX);
    assertThat(responder.result()).isCompletedWithValue("/yamux/1.0.0");
    assertThat(app.seen.toString()).isEqualTo(appData);
    assertThat(inboundHex(channel)).isEqualTo(appData);
  }

  @Test
  void channelRead_shouldForwardLaterReadsUntouched_afterSelection() {
    newResponder(NOISE_AND_YAMUX);
    channel.writeInbound(bytes(HEADER + NOISE));
    outboundHex(channel);

    channel.writeInbound(bytes("ffff0000"));

    assertThat(inboundHex(channel)).isEqualTo("ffff0000");
    assertThat(channel.isOpen()).isTrue();
  }

  @Test
  void channelRead_shouldReassemble_whenEveryByteArrivesInItsOwnRead() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);
    final byte[] wire = HexFormat.of().parseHex(HEADER + NOISE + "cafe");

    for (final byte b : wire) {
      channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
    }

    // The header echo leaves as soon as the header is complete, the echo once the proposal is.
    assertThat(outboundWrites(channel)).containsExactly(HEADER, NOISE);
    assertThat(responder.result()).isCompletedWithValue("/noise");
    assertThat(inboundHex(channel)).isEqualTo("cafe");
  }

  @Test
  void channelRead_shouldWaitForRest_whenHeaderSplitInsideLengthPrefixAndBody() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes(HEADER.substring(0, 12)));
    channel.writeInbound(bytes(HEADER.substring(12) + NOISE.substring(0, 4)));
    assertThat(outboundHex(channel)).isEqualTo(HEADER);
    assertThat(responder.result()).isNotDone();

    channel.writeInbound(bytes(NOISE.substring(4)));
    assertThat(outboundHex(channel)).isEqualTo(NOISE);
    assertThat(responder.result()).isCompletedWithValue("/noise");
  }

  @Test
  void channelRead_shouldAnswerAllInOneWrite_whenSeveralMessagesArriveInOneRead() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes(HEADER + TLS + message("/mplex/6.7.0") + NOISE + "0102"));

    assertThat(outboundWrites(channel)).containsExactly(HEADER + NA + NA + NOISE);
    assertThat(responder.result()).isCompletedWithValue("/noise");
    assertThat(inboundHex(channel)).isEqualTo("0102");
  }

  @Test
  void channelRead_shouldAnswerNaThenSelect_whenFirstProposalUnsupported() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes(HEADER + TLS));
    assertThat(outboundHex(channel)).isEqualTo(HEADER + NA);
    assertThat(responder.result()).isNotDone();
    assertThat(channel.pipeline().get(MultistreamResponder.class)).isSameAs(responder);

    channel.writeInbound(bytes(NOISE));
    assertThat(outboundHex(channel)).isEqualTo(NOISE);
    assertThat(installed).containsExactly("/noise");
  }

  @Test
  void channelRead_shouldSelectDynamicId_whenPredicateMatchesOrbitdbHeads() {
    // As the relay registers them: one id per database it holds, known only at run time.
    final Set<String> databases = Set.of(HEADS_ID.substring("/orbitdb/heads".length()));
    final ProtocolMatcher matcher = ProtocolMatcher.exact("/ipfs/id/1.0.0")
        .or(ProtocolMatcher.matching(id -> id.startsWith("/orbitdb/heads/")
            && databases.contains(id.substring("/orbitdb/heads".length()))));
    final MultistreamResponder responder = newResponder(matcher);
    final String heads = message(HEADS_ID);
    assertThat(heads).startsWith("492f6f7262697464622f68656164732f");

    channel.writeInbound(bytes(HEADER + message("/orbitdb/heads/orbitdb/zdpuUnknownDb1") + heads));

    assertThat(outboundHex(channel)).isEqualTo(HEADER + NA + heads);
    assertThat(responder.result()).isCompletedWithValue(HEADS_ID);
  }

  @Test
  void channelRead_shouldListExactIdsInJsFormat_whenLs() {
    final MultistreamResponder responder = newResponder(
        NOISE_AND_YAMUX.or(ProtocolMatcher.matching(id -> id.startsWith("/orbitdb/heads/"))));

    channel.writeInbound(bytes(HEADER + LS));

    // One message: each id length-prefixed with its newline, then a closing newline.
    assertThat(outboundHex(channel)).isEqualTo(HEADER + "17" + NOISE + YAMUX + "0a");
    assertThat(responder.result()).isNotDone();
    channel.writeInbound(bytes(NOISE));
    assertThat(responder.result()).isCompletedWithValue("/noise");
  }

  @Test
  void channelRead_shouldEchoHeaderAgain_whenHeaderRepeated() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes(HEADER + HEADER + NOISE));

    assertThat(outboundHex(channel)).isEqualTo(HEADER + HEADER + NOISE);
    assertThat(responder.result()).isCompletedWithValue("/noise");
  }

  @Test
  void channelRead_shouldNeverSelectReservedWords_whenMatcherAcceptsEverything() {
    final MultistreamResponder responder = newResponder(protocol -> true);

    channel.writeInbound(bytes(HEADER + NA + LS + message("") + NOISE));

    assertThat(outboundHex(channel)).isEqualTo(HEADER + NA + "010a" + NA + NOISE);
    assertThat(responder.result()).isCompletedWithValue("/noise");
  }

  @Test
  void channelRead_shouldCloseWithoutAnswer_whenMessageLongerThan1024() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);
    // 0x81 0x08 = 1025: rejected as soon as the prefix is read, before the body arrives.
    channel.writeInbound(bytes(HEADER + "8108" + "2f".repeat(20)));

    assertThat(outboundHex(channel)).isEmpty();
    assertClosedWith(responder, ProtocolViolationException.class);
    assertThat(failure(responder.result())).hasMessageContaining("1025 bytes exceeds 1024");
  }

  @Test
  void channelRead_shouldClose_whenPrefixAlreadyTooLongForLimit() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes("ffff"));

    assertClosedWith(responder, ProtocolViolationException.class);
  }

  @Test
  void channelRead_shouldAccept_whenMessageExactly1024Bytes() {
    final String longId = "/" + "x".repeat(1022);
    final MultistreamResponder responder = newResponder(ProtocolMatcher.exact(longId));
    final String proposal = message(longId);
    assertThat(proposal).startsWith("8008");

    channel.writeInbound(bytes(HEADER + proposal));

    assertThat(outboundHex(channel)).isEqualTo(HEADER + proposal);
    assertThat(responder.result()).isCompletedWithValue(longId);
  }

  @Test
  void channelRead_shouldClose_whenConfiguredLimitIsSmaller() {
    final MultistreamResponder responder = newResponder(
        NOISE_AND_YAMUX, MultistreamConfig.builder().maxMessageLength(64).build());

    channel.writeInbound(bytes(HEADER + message("/" + "y".repeat(63))));

    assertClosedWith(responder, ProtocolViolationException.class);
  }

  @Test
  void channelRead_shouldClose_whenNewlineMissing() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes(HEADER + "072f6e6f697365" + "20"));

    assertClosedWith(responder, ProtocolViolationException.class);
    assertThat(failure(responder.result())).hasMessageContaining("newline");
  }

  @Test
  void channelRead_shouldClose_whenMessageEmpty() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes(HEADER + "00"));

    assertClosedWith(responder, ProtocolViolationException.class);
  }

  @Test
  void channelRead_shouldClose_whenLengthPrefixNotMinimal() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes("9300" + HEADER.substring(2)));

    assertClosedWith(responder, ProtocolViolationException.class);
  }

  @Test
  void channelRead_shouldClose_whenNotUtf8() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes(HEADER + "03fffe0a"));

    assertClosedWith(responder, ProtocolViolationException.class);
  }

  @Test
  void channelRead_shouldClose_whenFirstMessageIsProposalInsteadOfHeader() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes(NOISE + HEADER));

    assertThat(outboundHex(channel)).isEmpty();
    assertClosedWith(responder, ProtocolViolationException.class);
    assertThat(failure(responder.result())).hasMessageContaining("\"/noise\"");
  }

  @Test
  void channelRead_shouldClose_whenHeaderHasOtherVersion() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.writeInbound(bytes(message("/multistream/2.0.0") + NOISE));

    assertClosedWith(responder, ProtocolViolationException.class);
  }

  @Test
  void channelRead_shouldClose_whenMoreProposalsThanLimit() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);
    final StringBuilder wire = new StringBuilder(HEADER);
    for (int i = 0; i < 32; i++) {
      wire.append(message("/unsupported/" + i));
    }

    channel.writeInbound(bytes(wire.toString()));
    assertThat(outboundHex(channel)).isEqualTo(HEADER + NA.repeat(32));
    assertThat(channel.isOpen()).isTrue();

    channel.writeInbound(bytes(NOISE));
    assertThat(outboundHex(channel)).isEmpty();
    assertClosedWith(responder, ProtocolViolationException.class);
    assertThat(failure(responder.result())).hasMessageContaining("more than 32");
  }

  @Test
  void channelRead_shouldClose_whenNegotiationBytesExceedLimit() {
    final MultistreamConfig config = MultistreamConfig.builder()
        .maxNegotiationBytes(2048)
        .maxProposals(100)
        .build();
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX, config);
    final String big = message("/" + "z".repeat(900));

    channel.writeInbound(bytes(HEADER + big + big));
    assertThat(outboundHex(channel)).isEqualTo(HEADER + NA + NA);
    channel.writeInbound(bytes(big));

    assertClosedWith(responder, ProtocolViolationException.class);
    assertThat(failure(responder.result())).hasMessageContaining("2048 bytes");
  }

  @Test
  void timeout_shouldCloseChannel_whenNoProposalWithinTenSeconds() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);
    channel.writeInbound(bytes(HEADER));
    assertThat(outboundHex(channel)).isEqualTo(HEADER);

    channel.advanceTimeBy(9_999, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(channel.isOpen()).isTrue();

    channel.advanceTimeBy(1, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertClosedWith(responder, NegotiationTimeoutException.class);
    assertThat(failure(responder.result())).isInstanceOf(BadPeerException.class);
  }

  @Test
  void timeout_shouldUseConfiguredValue_andBeCancelledBySelection() {
    final MultistreamResponder responder = newResponder(
        NOISE_AND_YAMUX, MultistreamConfig.builder().timeout(Duration.ofSeconds(2)).build());

    channel.writeInbound(bytes(HEADER + NOISE));
    channel.advanceTimeBy(60, TimeUnit.SECONDS);
    channel.runScheduledPendingTasks();

    assertThat(channel.isOpen()).isTrue();
    assertThat(responder.result()).isCompletedWithValue("/noise");
  }

  @Test
  void channelInactive_shouldFailResult_whenRemoteClosesMidNegotiation() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);
    channel.writeInbound(bytes(HEADER + "07"));

    channel.close();

    assertClosedWith(responder, ClosedChannelException.class);
  }

  @Test
  void userEventTriggered_shouldClose_whenRemoteHalfClosesBeforeProposal() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);
    channel.writeInbound(bytes(HEADER));

    channel.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);

    assertClosedWith(responder, ProtocolViolationException.class);
  }

  @Test
  void handlerRemoved_shouldFailResultAndReleaseQueue_whenRemovedBeforeSelection() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);
    channel.writeInbound(bytes(HEADER + "07"));
    outboundHex(channel);

    channel.pipeline().remove(responder);

    assertThat(failure(responder.result())).isInstanceOf(InternalErrorException.class);
    // The partial message is handed on with everything else that was not negotiation.
    assertThat(inboundHex(channel)).isEqualTo("07");
    channel.advanceTimeBy(10, TimeUnit.SECONDS);
    channel.runScheduledPendingTasks();
    assertThat(channel.isOpen()).isTrue();
  }

  @Test
  void install_shouldCloseChannel_whenInstallerThrows() {
    final MultistreamResponder responder = new MultistreamResponder(NOISE_AND_YAMUX,
        (ch, protocol) -> {
          throw new IllegalStateException("no handler for " + protocol);
        });
    channel = new EmbeddedChannel(responder);

    channel.writeInbound(bytes(HEADER + NOISE + "0102"));

    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
    assertThat(failure(responder.result())).isInstanceOf(InternalErrorException.class)
        .hasRootCauseMessage("no handler for /noise");
    assertThat(inboundHex(channel)).isEmpty();
  }

  @Test
  void exceptionCaught_shouldCloseAndFail_whenTransportErrorsDuringNegotiation() {
    final MultistreamResponder responder = newResponder(NOISE_AND_YAMUX);

    channel.pipeline().fireExceptionCaught(new IOException("connection reset"));

    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
    assertThat(failure(responder.result())).hasMessage("connection reset");
    channel.checkException();
  }

  @Test
  void channelRead_shouldOnlyEverCloseChannel_whenBytesAreRandom() {
    final Random random = new Random(0x6d7373L);
    for (int round = 0; round < 2_000; round++) {
      final List<String> selected = new ArrayList<>();
      final MultistreamResponder responder = new MultistreamResponder(
          NOISE_AND_YAMUX, (Channel ch, String protocol) -> selected.add(protocol));
      final EmbeddedChannel ch = new EmbeddedChannel(responder);
      final byte[] noise = new byte[random.nextInt(64)];
      random.nextBytes(noise);
      // Half the rounds start with a valid header so the proposal parser is exercised too.
      final byte[] prefix = round % 2 == 0 ? new byte[0] : HexFormat.of().parseHex(HEADER);
      final ByteBuf wire = Unpooled.wrappedBuffer(prefix, noise);
      // A closed channel reads nothing more, as with a real transport.
      while (wire.isReadable() && ch.isOpen()) {
        final int chunk = 1 + random.nextInt(Math.min(8, wire.readableBytes()));
        ch.writeInbound(wire.readRetainedSlice(chunk));
        ch.runPendingTasks();
      }
      wire.release();
      ch.runPendingTasks();
      ch.checkException();
      final CompletableFuture<String> result = responder.result();
      if (ch.isOpen()) {
        assertThat(result.isDone()).as("round %d", round).isEqualTo(!selected.isEmpty());
      } else {
        assertThat(failure(result)).as("round %d", round)
            .isInstanceOf(ProtocolViolationException.class);
      }
      ch.finishAndReleaseAll();
    }
  }
}
