package io.relaypinner.libp2p.security.noise;

import static io.relaypinner.libp2p.security.noise.NoiseTestSupport.channel;
import static io.relaypinner.libp2p.security.noise.NoiseTestSupport.drainInbound;
import static io.relaypinner.libp2p.security.noise.NoiseTestSupport.drainOutbound;
import static io.relaypinner.libp2p.security.noise.NoiseTestSupport.frame;
import static io.relaypinner.libp2p.security.noise.NoiseTestSupport.unframe;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.security.noise.NoiseTestSupport.EventRecorder;
import io.relaypinner.libp2p.security.noise.NoiseTestSupport.Link;
import io.relaypinner.libp2p.security.noise.NoiseTestSupport.TrackingAllocator;
import io.relaypinner.libp2p.security.noise.pb.NoiseProtos;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NoiseHandshakeHandlerTest {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final TrackingAllocator alloc = new TrackingAllocator(true);
  private final List<EmbeddedChannel> channels = new ArrayList<>();

  @AfterEach
  void releaseEverything() {
    for (final EmbeddedChannel channel : channels) {
      channel.finishAndReleaseAll();
    }
    alloc.assertAllReleased();
  }

  private EmbeddedChannel track(final EmbeddedChannel channel) {
    channels.add(channel);
    return channel;
  }

  private static PrivateKey identity(final KeyType type) {
    return Keys.generate(type, RANDOM);
  }

  private static NoiseProtocol protocol(final PrivateKey identity, final NoiseConfig config) {
    return new NoiseProtocol(identity, config, RANDOM);
  }

  /** A handshake between two of our handlers; both sides complete before this returns. */
  private final class Pair {
    final PrivateKey initiatorKey;
    final PrivateKey responderKey;
    final NoiseHandshakeHandler initiatorHandler;
    final NoiseHandshakeHandler responderHandler;
    final EventRecorder initiatorEvents = new EventRecorder();
    final EventRecorder responderEvents = new EventRecorder();
    final Link link;

    Pair(final KeyType initiatorType, final KeyType responderType) {
      this(
          identity(initiatorType),
          identity(responderType),
          NoiseConfig.DEFAULT,
          NoiseConfig.DEFAULT);
    }

    Pair(
        final PrivateKey initiatorKey,
        final PrivateKey responderKey,
        final NoiseConfig initiatorConfig,
        final NoiseConfig responderConfig) {
      this.initiatorKey = initiatorKey;
      this.responderKey = responderKey;
      this.initiatorHandler =
          protocol(initiatorKey, initiatorConfig)
              .newInitiator(Optional.of(responderKey.publicKey().peerId()));
      this.responderHandler = protocol(responderKey, responderConfig).newResponder();
      // Responder first: the initiator writes message 1 as soon as it is added.
      final EmbeddedChannel responder = track(channel(alloc, responderHandler, responderEvents));
      final EmbeddedChannel initiator = track(channel(alloc, initiatorHandler, initiatorEvents));
      this.link = new Link(initiator, responder);
    }

    SecureSession initiatorSession() {
      return initiatorHandler.handshakeFuture().getNow(null);
    }

    SecureSession responderSession() {
      return responderHandler.handshakeFuture().getNow(null);
    }
  }

  private static Throwable failure(final NoiseHandshakeHandler handler) {
    final CompletableFuture<SecureSession> future = handler.handshakeFuture();
    assertThat(future).isCompletedExceptionally();
    try {
      future.get();
      throw new AssertionError("not failed");
    } catch (final ExecutionException e) {
      return e.getCause();
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static void assertNoOutbound(final EmbeddedChannel channel, final String what) {
    final Object msg = channel.readOutbound();
    assertThat(msg).as(what).isNull();
  }

  private static void assertNoInbound(final EmbeddedChannel channel) {
    final Object msg = channel.readInbound();
    assertThat(msg).isNull();
  }

  private static byte[] random(final int length) {
    final byte[] bytes = new byte[length];
    RANDOM.nextBytes(bytes);
    return bytes;
  }

  @ParameterizedTest
  @CsvSource({"ED25519, ED25519", "SECP256K1, SECP256K1", "ED25519, SECP256K1"})
  void handshake_shouldAuthenticateBothSides_whenIdentitiesAreValid(
      final KeyType initiatorType, final KeyType responderType) {
    final Pair pair = new Pair(initiatorType, responderType);
    pair.link.pump();

    final SecureSession atInitiator = pair.initiatorSession();
    final SecureSession atResponder = pair.responderSession();
    assertThat(atInitiator).isNotNull();
    assertThat(atResponder).isNotNull();
    assertThat(atInitiator.remotePeerId()).isEqualTo(pair.responderKey.publicKey().peerId());
    assertThat(atInitiator.remotePublicKey()).isEqualTo(pair.responderKey.publicKey());
    assertThat(atResponder.remotePeerId()).isEqualTo(pair.initiatorKey.publicKey().peerId());
    assertThat(atInitiator.initiator()).isTrue();
    assertThat(atResponder.initiator()).isFalse();
    assertThat(atInitiator.remoteStreamMuxers()).containsExactly(NoiseConfig.YAMUX);
    assertThat(atResponder.remoteStreamMuxers()).containsExactly(NoiseConfig.YAMUX);
    assertThat(atInitiator.earlyMuxer()).contains(NoiseConfig.YAMUX);
    assertThat(atResponder.earlyMuxer()).contains(NoiseConfig.YAMUX);
    assertThat(pair.initiatorEvents.events).containsExactly(atInitiator);
    assertThat(pair.responderEvents.events).containsExactly(atResponder);
    for (final EmbeddedChannel channel : List.of(pair.link.initiator, pair.link.responder)) {
      assertThat(channel.pipeline().get(NoiseHandshakeHandler.class)).isNull();
      assertThat(channel.pipeline().context(NoiseTransportCodec.class).name())
          .isEqualTo(channel.pipeline().names().get(0));
      assertThat(channel.isOpen()).isTrue();
    }
  }

  @Test
  void handshake_shouldSendJsSizedMessages_whenIdentityIsEd25519() {
    final Pair pair = new Pair(KeyType.ED25519, KeyType.ED25519);
    final List<byte[]> message1 = unframe(drainOutbound(pair.link.initiator));
    // Message 1 is the bare 32-byte ephemeral key, as js-libp2p-noise sends it.
    assertThat(message1).hasSize(1);
    assertThat(message1.get(0)).hasSize(32);
    pair.link.responder.writeInbound(alloc.of(frame(message1.get(0))));
    final List<byte[]> message2 = unframe(drainOutbound(pair.link.responder));
    // e (32) + encrypted s (48) + encrypted payload: key 2+36, sig 2+64, extensions 2+2+12, tag.
    assertThat(message2.get(0)).hasSize(32 + 48 + 38 + 66 + 16 + 16);
    pair.link.initiator.writeInbound(alloc.of(frame(message2.get(0))));
    pair.link.pump();
    assertThat(pair.initiatorSession()).isNotNull();
    assertThat(pair.responderSession()).isNotNull();
  }

  @Test
  void transport_shouldCarryDataBothWays_whenWritesAreSmallAndLarge() {
    final Pair pair = new Pair(KeyType.ED25519, KeyType.ED25519);
    pair.link.pump();
    final EmbeddedChannel initiator = pair.link.initiator;
    final EmbeddedChannel responder = pair.link.responder;

    initiator.writeOutbound(alloc.of("hello".getBytes()));
    responder.writeOutbound(alloc.of("world".getBytes()));
    pair.link.pump();
    assertThat(new String(drainInbound(responder))).isEqualTo("hello");
    assertThat(new String(drainInbound(initiator))).isEqualTo("world");

    final byte[] big = random(200 * 1024);
    initiator.writeOutbound(alloc.of(big));
    final byte[] wire = drainOutbound(initiator);
    final List<byte[]> messages = unframe(wire);
    // 65519 plaintext bytes per message: 3 full messages and the rest.
    assertThat(messages)
        .extracting(m -> m.length)
        .containsExactly(65535, 65535, 65535, 200 * 1024 - 3 * 65519 + 16);
    responder.writeInbound(alloc.of(wire));
    assertThat(drainInbound(responder)).isEqualTo(big);
  }

  @Test
  void transport_shouldReassembleMessages_whenSplitAcrossReads() {
    final Pair pair = new Pair(KeyType.ED25519, KeyType.ED25519);
    pair.link.pump();
    final byte[] data = random(70_000);
    pair.link.responder.writeOutbound(alloc.of(data));
    final byte[] wire = drainOutbound(pair.link.responder);
    // Cut inside the first length prefix, inside the first message, and between messages.
    final int[] cuts = {1, 2, 1000, 65537, 65538, 65540, wire.length};
    int from = 0;
    final List<byte[]> received = new ArrayList<>();
    for (final int cut : cuts) {
      pair.link.initiator.writeInbound(alloc.of(Arrays.copyOfRange(wire, from, cut)));
      received.add(drainInbound(pair.link.initiator));
      from = cut;
    }
    assertThat(received.get(0)).isEmpty();
    assertThat(received.get(2)).isEmpty();
    assertThat(received.get(3)).hasSize(65519);
    final byte[] all = new byte[data.length];
    int offset = 0;
    for (final byte[] part : received) {
      System.arraycopy(part, 0, all, offset, part.length);
      offset += part.length;
    }
    assertThat(offset).isEqualTo(data.length);
    assertThat(all).isEqualTo(data);
  }

  @Test
  void transport_shouldDeliverManyMessagesOfOneRead_asOneBuffer() {
    final Pair pair = new Pair(KeyType.ED25519, KeyType.ED25519);
    pair.link.pump();
    for (int i = 0; i < 5; i++) {
      pair.link.initiator.writeOutbound(alloc.of(new byte[] {(byte) i}));
    }
    pair.link.initiator.writeOutbound(alloc.buffer(0));
    final byte[] wire = drainOutbound(pair.link.initiator);
    assertThat(wire).hasSize(5 * 19);
    pair.link.responder.writeInbound(alloc.of(wire));
    final ByteBuf first = pair.link.responder.readInbound();
    try {
      assertThat(first.readableBytes()).isEqualTo(5);
    } finally {
      first.release();
    }
    assertNoInbound(pair.link.responder);
  }

  @Test
  void handshake_shouldFeedBytesBehindMessage3IntoTransport_whenTheyArriveInTheSameRead() {
    final Pair pair = new Pair(KeyType.ED25519, KeyType.ED25519);
    final EmbeddedChannel initiator = pair.link.initiator;
    final EmbeddedChannel responder = pair.link.responder;
    responder.writeInbound(alloc.of(drainOutbound(initiator)));
    initiator.writeInbound(alloc.of(drainOutbound(responder)));
    assertThat(pair.initiatorSession()).isNotNull();
    // Message 3 and the first transport message go out back to back, as js-libp2p sends them.
    initiator.writeOutbound(alloc.of("early".getBytes()));
    final byte[] message3AndData = drainOutbound(initiator);
    assertThat(unframe(message3AndData)).hasSize(2);

    responder.writeInbound(alloc.of(message3AndData));
    assertThat(pair.responderSession()).isNotNull();
    assertThat(new String(drainInbound(responder))).isEqualTo("early");
  }

  @Test
  void handshake_shouldRefuseWrites_whileHandshaking() {
    final Pair pair = new Pair(KeyType.ED25519, KeyType.ED25519);
    drainOutbound(pair.link.initiator);
    final ChannelFuture write = pair.link.initiator.writeAndFlush(alloc.of("secret".getBytes()));
    assertThat(write.cause()).isInstanceOf(IllegalStateException.class);
    assertNoOutbound(pair.link.initiator, "outbound");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = ';',
      value = {
        // initiator list; responder list; expected early muxer ("" = none)
        "/yamux/1.0.0; /yamux/1.0.0; /yamux/1.0.0",
        "/yamux/1.0.0,/mplex/6.7.0; /mplex/6.7.0,/yamux/1.0.0; /yamux/1.0.0",
        "/mplex/6.7.0,/yamux/1.0.0; /yamux/1.0.0,/mplex/6.7.0; /mplex/6.7.0",
        "/yamux/1.0.0; ; ''",
        "; /yamux/1.0.0; ''"
      })
  void handshake_shouldSelectFirstCommonMuxerOfInitiator_whenBothSendLists(
      final String initiatorList, final String responderList, final String expected) {
    final Pair pair =
        new Pair(
            identity(KeyType.ED25519),
            identity(KeyType.ED25519),
            NoiseConfig.builder().streamMuxers(list(initiatorList)).build(),
            NoiseConfig.builder().streamMuxers(list(responderList)).build());
    pair.link.pump();
    final Optional<String> early = expected.isEmpty() ? Optional.empty() : Optional.of(expected);
    assertThat(pair.initiatorSession().earlyMuxer()).isEqualTo(early);
    assertThat(pair.responderSession().earlyMuxer()).isEqualTo(early);
    assertThat(pair.initiatorSession().remoteStreamMuxers()).isEqualTo(list(responderList));
    assertThat(pair.responderSession().remoteStreamMuxers()).isEqualTo(list(initiatorList));
  }

  private static List<String> list(final String csv) {
    return csv == null || csv.isBlank() ? List.of() : List.of(csv.split(","));
  }

  @Test
  void handshake_shouldFailBeforeMessage3_whenMuxerListsHaveNothingInCommon() {
    final Pair pair =
        new Pair(
            identity(KeyType.ED25519),
            identity(KeyType.ED25519),
            NoiseConfig.builder().streamMuxers(List.of("/mplex/6.7.0")).build(),
            NoiseConfig.DEFAULT);
    pair.link.pump();
    assertThat(failure(pair.initiatorHandler))
        .isExactlyInstanceOf(BadPeerException.class)
        .hasMessageContaining("no common stream muxer");
    assertThat(pair.link.initiator.isOpen()).isFalse();
    // The responder, still waiting for message 3, sees the connection go away.
    pair.link.responder.close();
    assertThat(failure(pair.responderHandler))
        .isExactlyInstanceOf(BadPeerException.class)
        .hasMessageContaining("waiting for message 3");
  }

  @Test
  void handshake_shouldFailWithUnexpectedPeer_whenDialerExpectedAnotherPeerId() {
    final PrivateKey responderKey = identity(KeyType.ED25519);
    final PrivateKey someoneElse = identity(KeyType.ED25519);
    final NoiseHandshakeHandler responder =
        protocol(responderKey, NoiseConfig.DEFAULT).newResponder();
    final NoiseHandshakeHandler initiator =
        protocol(identity(KeyType.ED25519), NoiseConfig.DEFAULT)
            .newInitiator(Optional.of(someoneElse.publicKey().peerId()));
    final EmbeddedChannel responderChannel = track(channel(alloc, responder));
    final EmbeddedChannel initiatorChannel = track(channel(alloc, initiator));
    responderChannel.writeInbound(alloc.of(drainOutbound(initiatorChannel)));
    initiatorChannel.writeInbound(alloc.of(drainOutbound(responderChannel)));

    assertThat(failure(initiator))
        .isInstanceOfSatisfying(
            UnexpectedPeerException.class,
            e -> {
              assertThat(e.expected()).isEqualTo(someoneElse.publicKey().peerId());
              assertThat(e.actual()).isEqualTo(responderKey.publicKey().peerId());
            });
    assertThat(initiatorChannel.isOpen()).isFalse();
    // Our identity never went out: no message 3.
    assertNoOutbound(initiatorChannel, "outbound");
  }

  // --- hostile remotes, played with the engine directly ---

  /** Our initiator against a scripted responder that answers message 1 with {@code payload}. */
  private NoiseHandshakeHandler initiatorAgainst(
      final X25519KeyPair responderStatic, final byte[] payload) {
    final NoiseHandshakeHandler handler =
        protocol(identity(KeyType.ED25519), NoiseConfig.DEFAULT).newInitiator(Optional.empty());
    final EmbeddedChannel channel = track(channel(alloc, handler));
    final HandshakeState remote =
        new HandshakeState(
            false, new byte[0], responderStatic, () -> X25519KeyPair.generate(RANDOM));
    remote.readMessage(unframe(drainOutbound(channel)).get(0));
    channel.writeInbound(alloc.of(frame(remote.writeMessage(payload))));
    assertThat(channel.isOpen()).isFalse();
    assertNoOutbound(channel, "no message 3");
    return handler;
  }

  @Test
  void handshake_shouldFail_whenPayloadSignatureCoversAnotherStaticKey() {
    final X25519KeyPair used = X25519KeyPair.generate(RANDOM);
    final X25519KeyPair signed = X25519KeyPair.generate(RANDOM);
    final byte[] payload =
        HandshakePayload.encode(
            identity(KeyType.ED25519), signed.publicKey(), List.of(NoiseConfig.YAMUX));
    assertThat(failure(initiatorAgainst(used, payload)))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("signature");
  }

  @Test
  void handshake_shouldFail_whenIdentityKeyIsNotAValidKey() {
    final byte[] payload =
        NoiseProtos.NoiseHandshakePayload.newBuilder()
            .setIdentityKey(ByteString.copyFrom(new byte[] {0x08, 0x01, 0x12, 0x03, 1, 2, 3}))
            .setIdentitySig(ByteString.copyFrom(new byte[64]))
            .build()
            .toByteArray();
    assertThat(failure(initiatorAgainst(X25519KeyPair.generate(RANDOM), payload)))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("identity_key");
  }

  @Test
  void handshake_shouldFail_whenPayloadIsNotProtobuf() {
    assertThat(failure(initiatorAgainst(X25519KeyPair.generate(RANDOM), new byte[] {(byte) 0xff})))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("malformed");
  }

  @Test
  void handshake_shouldFail_whenPayloadIsEmpty() {
    assertThat(failure(initiatorAgainst(X25519KeyPair.generate(RANDOM), new byte[0])))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("identity_key");
  }

  @Test
  void responder_shouldIgnoreMessage1Payload_andSkipEarlyMuxer_whenInitiatorListIsEmpty() {
    final PrivateKey responderKey = identity(KeyType.ED25519);
    final NoiseHandshakeHandler handler =
        protocol(responderKey, NoiseConfig.DEFAULT).newResponder();
    final EmbeddedChannel channel = track(channel(alloc, handler));
    final PrivateKey initiatorKey = identity(KeyType.SECP256K1);
    final X25519KeyPair initiatorStatic = X25519KeyPair.generate(RANDOM);
    final HandshakeState remote =
        new HandshakeState(
            true, new byte[0], initiatorStatic, () -> X25519KeyPair.generate(RANDOM));
    channel.writeInbound(alloc.of(frame(remote.writeMessage("ignored".getBytes()))));
    remote.readMessage(unframe(drainOutbound(channel)).get(0));
    // js-libp2p-noise with skipStreamMuxerNegotiation: extensions present, stream_muxers empty.
    final byte[] payload =
        NoiseProtos.NoiseHandshakePayload.newBuilder()
            .setIdentityKey(ByteString.copyFrom(initiatorKey.publicKey().marshal()))
            .setIdentitySig(
                ByteString.copyFrom(
                    initiatorKey.sign(HandshakePayload.signedData(initiatorStatic.publicKey()))))
            .setExtensions(NoiseProtos.NoiseExtensions.newBuilder())
            .build()
            .toByteArray();
    channel.writeInbound(alloc.of(frame(remote.writeMessage(payload))));

    final SecureSession session = handler.handshakeFuture().getNow(null);
    assertThat(session.remotePeerId()).isEqualTo(initiatorKey.publicKey().peerId());
    assertThat(session.remoteStreamMuxers()).isEmpty();
    assertThat(session.earlyMuxer()).isEmpty();
    // The transport works with the scripted side's split ciphers.
    final TransportCiphers ciphers = remote.split();
    channel.writeInbound(
        alloc.of(frame(ciphers.send().encryptWithAd(new byte[0], "hi".getBytes()))));
    assertThat(new String(drainInbound(channel))).isEqualTo("hi");
  }

  @Test
  void handshake_shouldFail_whenMessage2IsRandomBytes() {
    final NoiseHandshakeHandler handler =
        protocol(identity(KeyType.ED25519), NoiseConfig.DEFAULT).newInitiator(Optional.empty());
    final EmbeddedChannel channel = track(channel(alloc, handler));
    drainOutbound(channel);
    channel.writeInbound(alloc.of(frame(random(200))));
    assertThat(failure(handler))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("authentication");
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void handshake_shouldFail_whenMessage2IsTruncated() {
    final NoiseHandshakeHandler handler =
        protocol(identity(KeyType.ED25519), NoiseConfig.DEFAULT).newInitiator(Optional.empty());
    final EmbeddedChannel channel = track(channel(alloc, handler));
    drainOutbound(channel);
    // e and a partial encrypted s: 32 + 40 bytes.
    channel.writeInbound(alloc.of(frame(random(72))));
    assertThat(failure(handler))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("truncated");
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void handshake_shouldFail_whenMessage1IsShorterThanAKey() {
    final NoiseHandshakeHandler handler =
        protocol(identity(KeyType.ED25519), NoiseConfig.DEFAULT).newResponder();
    final EmbeddedChannel channel = track(channel(alloc, handler));
    channel.writeInbound(alloc.of(frame(random(31))));
    assertThat(failure(handler))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("truncated");
    assertThat(channel.isOpen()).isFalse();
    assertNoOutbound(channel, "outbound");
  }

  @Test
  void handshake_shouldFail_whenEphemeralKeyIsLowOrder() {
    final NoiseHandshakeHandler handler =
        protocol(identity(KeyType.ED25519), NoiseConfig.DEFAULT).newResponder();
    final EmbeddedChannel channel = track(channel(alloc, handler));
    channel.writeInbound(alloc.of(frame(new byte[32])));
    assertThat(failure(handler))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("low-order");
    assertNoOutbound(channel, "outbound");
  }

  @Test
  void handshake_shouldFailBeforeBuffering_whenLengthPrefixExceedsLimit() {
    final NoiseConfig config = NoiseConfig.builder().maxMessageLength(1024).build();
    final NoiseHandshakeHandler handler =
        protocol(identity(KeyType.ED25519), config).newResponder();
    final EmbeddedChannel channel = track(channel(alloc, handler));
    channel.writeInbound(alloc.of(new byte[] {0x04, 0x01}));
    assertThat(failure(handler))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("1025 bytes exceeds the limit of 1024");
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void handshake_shouldFail_whenRemoteClosesMidMessage() {
    final NoiseHandshakeHandler handler =
        protocol(identity(KeyType.ED25519), NoiseConfig.DEFAULT).newResponder();
    final EmbeddedChannel channel = track(channel(alloc, handler));
    channel.writeInbound(alloc.of(new byte[] {0x00, 0x20, 1, 2, 3}));
    channel.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
    assertThat(failure(handler))
        .isExactlyInstanceOf(BadPeerException.class)
        .hasMessageContaining("waiting for message 1");
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void handshake_shouldFail_whenConnectionCloses() {
    final NoiseHandshakeHandler handler =
        protocol(identity(KeyType.ED25519), NoiseConfig.DEFAULT).newInitiator(Optional.empty());
    final EmbeddedChannel channel = track(channel(alloc, handler));
    drainOutbound(channel);
    channel.writeInbound(alloc.of(new byte[] {0x00}));
    channel.close();
    assertThat(failure(handler))
        .isExactlyInstanceOf(BadPeerException.class)
        .hasMessageContaining("connection closed");
  }

  @Test
  void handshake_shouldTimeOut_whenRemoteStaysSilent() {
    final NoiseConfig config =
        NoiseConfig.builder().handshakeTimeout(Duration.ofSeconds(3)).build();
    final NoiseHandshakeHandler handler =
        protocol(identity(KeyType.ED25519), config).newInitiator(Optional.empty());
    final EmbeddedChannel channel = new EmbeddedChannel();
    channel.freezeTime();
    channel.config().setAllocator(alloc);
    channel.pipeline().addLast(handler);
    track(channel);
    drainOutbound(channel);
    channel.advanceTimeBy(2999, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(handler.handshakeFuture()).isNotDone();
    assertThat(channel.isOpen()).isTrue();
    channel.advanceTimeBy(1, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    assertThat(failure(handler))
        .isExactlyInstanceOf(BadPeerException.class)
        .hasMessageContaining("did not complete within PT3S");
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void handshake_shouldNotTimeOut_afterCompletion() {
    final Pair pair = new Pair(KeyType.ED25519, KeyType.ED25519);
    pair.link.pump();
    pair.link.initiator.advanceTimeBy(1, TimeUnit.HOURS);
    pair.link.initiator.runScheduledPendingTasks();
    assertThat(pair.link.initiator.isOpen()).isTrue();
    assertThat(pair.initiatorSession()).isNotNull();
  }

  @Test
  void transport_shouldCloseWithProtocolViolation_whenCiphertextIsTampered() {
    final Pair pair = new Pair(KeyType.ED25519, KeyType.ED25519);
    pair.link.pump();
    pair.link.initiator.writeOutbound(alloc.of("payload".getBytes()));
    final byte[] wire = drainOutbound(pair.link.initiator);
    wire[5] ^= 0x01;
    final ByteBuf tampered = alloc.of(wire);
    assertThatThrownBy(() -> pair.link.responder.writeInbound(tampered))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("authentication");
    assertThat(pair.link.responder.isOpen()).isFalse();
    assertNoInbound(pair.link.responder);
  }

  @Test
  void transport_shouldCloseWithProtocolViolation_whenMessageIsShorterThanTag() {
    final Pair pair = new Pair(KeyType.ED25519, KeyType.ED25519);
    pair.link.pump();
    final ByteBuf shortMessage = alloc.of(new byte[] {0x00, 0x0f});
    assertThatThrownBy(() -> pair.link.responder.writeInbound(shortMessage))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("15 bytes");
    assertThat(pair.link.responder.isOpen()).isFalse();
  }

  @Test
  void transport_shouldCloseBeforeBuffering_whenLengthPrefixExceedsConfiguredLimit() {
    final NoiseConfig small = NoiseConfig.builder().maxMessageLength(1024).build();
    final Pair pair = new Pair(identity(KeyType.ED25519), identity(KeyType.ED25519), small, small);
    pair.link.pump();
    final ByteBuf oversize = alloc.of(new byte[] {0x04, 0x01, 0x00});
    assertThatThrownBy(() -> pair.link.initiator.writeInbound(oversize))
        .isExactlyInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("1025 bytes");
    assertThat(pair.link.initiator.isOpen()).isFalse();
  }

  @Test
  void transport_shouldChunkToConfiguredLimit_whenMaxMessageLengthIsLowered() {
    final NoiseConfig small = NoiseConfig.builder().maxMessageLength(1024).build();
    final Pair pair = new Pair(identity(KeyType.ED25519), identity(KeyType.ED25519), small, small);
    pair.link.pump();
    final byte[] data = random(3000);
    pair.link.initiator.writeOutbound(alloc.of(data));
    final byte[] wire = drainOutbound(pair.link.initiator);
    assertThat(unframe(wire))
        .extracting(m -> m.length)
        .containsExactly(1024, 1024, 3000 - 2016 + 16);
    pair.link.responder.writeInbound(alloc.of(wire));
    assertThat(drainInbound(pair.link.responder)).isEqualTo(data);
  }

  @Test
  void transport_shouldRefuseNonByteBufWrites_soNothingBypassesEncryption() {
    final Pair pair = new Pair(KeyType.ED25519, KeyType.ED25519);
    pair.link.pump();
    final ChannelFuture write = pair.link.initiator.writeAndFlush("plaintext string");
    assertThat(write.cause()).isInstanceOf(IllegalArgumentException.class);
    assertNoOutbound(pair.link.initiator, "outbound");
  }
}
