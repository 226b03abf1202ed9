package io.relaypinner.libp2p.protocol.identify;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.protocol.identify.pb.IdentifyProtos.Identify;
import io.relaypinner.libp2p.protocol.ping.TestStream;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.multiformats.Uvarint;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class IdentifyProtocolTest {
  private static final String AGENT = IdentifyLocal.agentVersion("0.1.0");
  private static final String JS_AGENT = "js-libp2p/3.3.11 node/22.23.3";
  private static final List<String> OUR_PROTOCOLS = List.of(
      "/ipfs/id/1.0.0", "/ipfs/id/push/1.0.0", "/ipfs/ping/1.0.0", "/meshsub/1.2.0",
      "/meshsub/1.1.0", "/meshsub/1.0.0", "/ipfs/bitswap/1.2.0",
      "/libp2p/circuit/relay/0.2.0/hop");
  /** What js-libp2p 2.x and 3.x nodes with the OrbitDB service set list (js-interop.md §5). */
  private static final List<String> JS_PROTOCOLS = List.of(
      "/floodsub/1.0.0", "/ipfs/bitswap/1.2.0", "/ipfs/id/1.0.0", "/ipfs/id/push/1.0.0",
      "/ipfs/ping/1.0.0", "/meshsub/1.0.0", "/meshsub/1.1.0", "/meshsub/1.2.0");
  /** A listen address with a multiaddr code we do not know (0x7777) after a valid /ip4. */
  private static final byte[] UNKNOWN_CODE_ADDR = HexFormat.of().parseHex("04c0000201f7ee0100");

  private final SecureRandom random = new SecureRandom();
  private final PrivateKey ourKey = Keys.generate(KeyType.ED25519, random);
  private final PrivateKey remoteKey = Keys.generate(KeyType.ED25519, random);
  private final PeerId ourId = ourKey.publicKey().peerId();
  private final PeerId remoteId = remoteKey.publicKey().peerId();
  private final AtomicReference<List<Multiaddr>> ourAddrs = new AtomicReference<>(List.of(
      Multiaddr.parse("/ip4/203.0.113.5/tcp/4001").withPeerId(ourId),
      Multiaddr.parse("/dns4/relay.example/tcp/443/tls/sni/relay.example/ws").withPeerId(ourId),
      Multiaddr.parse("/ip4/203.0.113.5/tcp/4001")));
  private final AtomicReference<List<String>> ourProtocols = new AtomicReference<>(OUR_PROTOCOLS);
  private final IdentifyLocal local =
      IdentifyLocal.of(ourKey.publicKey(), AGENT, ourAddrs::get, ourProtocols::get);
  private final IdentifyProtocol identify = new IdentifyProtocol(local, IdentifyConfig.DEFAULT);
  private final IdentifyPushProtocol push = new IdentifyPushProtocol(local, IdentifyConfig.DEFAULT);
  private final TestStream stream = new TestStream();

  @AfterEach
  void tearDown() {
    assertThat(stream.finishAndCountUnreleased()).as("unreleased bytes").isZero();
  }

  // ---- helpers

  private static Multiaddr ma(final String text) {
    return Multiaddr.parse(text);
  }

  private static ByteString bytes(final Multiaddr addr) {
    return ByteString.copyFrom(addr.bytes());
  }

  private static byte[] frame(final byte[] body) {
    final byte[] prefix = Uvarint.encode(body.length);
    final byte[] out = Arrays.copyOf(prefix, prefix.length + body.length);
    System.arraycopy(body, 0, out, prefix.length, body.length);
    return out;
  }

  private static byte[] frame(final Identify message) {
    return frame(message.toByteArray());
  }

  /** Splits {@code uvarint ‖ body} frames and parses each body. */
  private static List<Identify> parseFrames(final byte[] wire) throws IOException {
    final List<Identify> out = new ArrayList<>();
    int pos = 0;
    while (pos < wire.length) {
      final Uvarint.Decoded length = Uvarint.decode(wire, pos);
      pos += length.length();
      out.add(Identify.parseFrom(Arrays.copyOfRange(wire, pos, pos + (int) length.value())));
      pos += (int) length.value();
    }
    return out;
  }

  /**
   * Encodes like js-libp2p's protons codec: fields in declaration order (5, 6, 1, 2, 4, 3, 8),
   * not in field-number order as protobuf-java does.
   */
  private static byte[] jsOrder(final Identify m) throws IOException {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final CodedOutputStream cos = CodedOutputStream.newInstance(out);
    if (m.hasProtocolVersion()) {
      cos.writeString(5, m.getProtocolVersion());
    }
    if (m.hasAgentVersion()) {
      cos.writeString(6, m.getAgentVersion());
    }
    if (m.hasPublicKey()) {
      cos.writeBytes(1, m.getPublicKey());
    }
    for (final ByteString addr : m.getListenAddrsList()) {
      cos.writeBytes(2, addr);
    }
    if (m.hasObservedAddr()) {
      cos.writeBytes(4, m.getObservedAddr());
    }
    for (final String protocol : m.getProtocolsList()) {
      cos.writeString(3, protocol);
    }
    if (m.hasSignedPeerRecord()) {
      cos.writeBytes(8, m.getSignedPeerRecord());
    }
    cos.flush();
    return out.toByteArray();
  }

  /** An identify response as js-libp2p 2.x/3.x sends it ({@code Identify.handleProtocol}). */
  private Identify jsIdentify() {
    return Identify.newBuilder()
        .setProtocolVersion("ipfs/0.1.0")
        .setAgentVersion(JS_AGENT)
        .setPublicKey(ByteString.copyFrom(remoteKey.publicKey().marshal()))
        // listenAddrs: addressManager.getAddresses() with /p2p/<self> decapsulated
        .addListenAddrs(bytes(ma("/ip4/192.168.1.20/tcp/4001")))
        .addListenAddrs(bytes(ma("/ip4/127.0.0.1/tcp/4001")))
        .addListenAddrs(bytes(ma("/ip4/192.168.1.20/tcp/4002/ws")))
        // observedAddr: connection.remoteAddr.bytes, which js-libp2p ends with /p2p/<us>
        .setObservedAddr(bytes(ma("/ip4/203.0.113.5/tcp/4001").withPeerId(ourId)))
        .addAllProtocols(JS_PROTOCOLS)
        // signedPeerRecord: a sealed envelope; opaque to us, any bytes will do
        .setSignedPeerRecord(ByteString.copyFrom(HexFormat.of().parseHex("0a2408011220abcdef")))
        .build();
  }

  private static Throwable failure(final CompletableFuture<?> future) {
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

  // ---- responder

  @Test
  void responder_shouldSendExactlyTheExpectedMessage_thenClose() throws IOException {
    final CompletableFuture<Void> sent =
        identify.installResponder(stream, ma("/ip4/198.51.100.7/tcp/53122"));
    final Identify expected = Identify.newBuilder()
        .setProtocolVersion("ipfs/0.1.0")
        .setAgentVersion("relay-pinner/0.1.0")
        .setPublicKey(ByteString.copyFrom(ourKey.publicKey().marshal()))
        .addListenAddrs(bytes(ma("/ip4/203.0.113.5/tcp/4001")))
        .addListenAddrs(bytes(ma("/dns4/relay.example/tcp/443/tls/sni/relay.example/ws")))
        .setObservedAddr(bytes(ma("/ip4/198.51.100.7/tcp/53122")))
        .addAllProtocols(OUR_PROTOCOLS)
        .build();
    final byte[] wire = stream.drainOutbound();
    assertThat(wire).isEqualTo(frame(expected));
    final List<Identify> messages = parseFrames(wire);
    assertThat(messages).containsExactly(expected);
    assertThat(messages.get(0).hasSignedPeerRecord()).isFalse();
    assertThat(sent).isCompleted();
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void responder_shouldReadAddressesAndProtocolsAtEachResponse_whenHostChangesThem()
      throws IOException {
    identify.installResponder(stream, null);
    assertThat(parseFrames(stream.drainOutbound()).get(0).getProtocolsList())
        .isEqualTo(OUR_PROTOCOLS);
    ourProtocols.set(List.of("/ipfs/id/1.0.0", "/orbitdb/heads/orbitdb/zdpuAexample"));
    ourAddrs.set(List.of());
    final TestStream second = new TestStream();
    try {
      identify.installResponder(second, null);
      final Identify message = parseFrames(second.drainOutbound()).get(0);
      assertThat(message.getProtocolsList())
          .containsExactly("/ipfs/id/1.0.0", "/orbitdb/heads/orbitdb/zdpuAexample");
      assertThat(message.getListenAddrsList()).isEmpty();
      assertThat(message.hasObservedAddr()).isFalse();
    } finally {
      assertThat(second.finishAndCountUnreleased()).as("unreleased bytes").isZero();
    }
  }

  @Test
  void responder_shouldTrimProtocolsThenAddresses_whenMessageWouldExceedTheLimit()
      throws IOException {
    final List<String> many = new ArrayList<>(OUR_PROTOCOLS);
    for (int i = 0; i < 200; i++) {
      many.add("/orbitdb/heads/orbitdb/zdpuAnDqkR8Hq3KMoFNc4F5mqcN7xRQ1K9BTvT5N7pLuz" + i);
    }
    ourProtocols.set(many);
    identify.installResponder(stream, ma("/ip4/198.51.100.7/tcp/53122"));
    final byte[] wire = stream.drainOutbound();
    final Identify message = parseFrames(wire).get(0);
    assertThat(message.getSerializedSize()).isLessThanOrEqualTo(8192);
    assertThat(message.getProtocolsList())
        .startsWith(OUR_PROTOCOLS.toArray(String[]::new))
        .isEqualTo(many.subList(0, message.getProtocolsCount()))
        .hasSizeLessThan(many.size());
    // The next protocol did not fit; the addresses then take what room is left, in order.
    final String next = many.get(message.getProtocolsCount());
    assertThat(8192 - message.getSerializedSize())
        .isLessThan(CodedOutputStream.computeStringSize(3, next));
    final List<ByteString> ourBareAddrs = List.of(bytes(ma("/ip4/203.0.113.5/tcp/4001")),
        bytes(ma("/dns4/relay.example/tcp/443/tls/sni/relay.example/ws")));
    assertThat(message.getListenAddrsList())
        .isEqualTo(ourBareAddrs.subList(0, message.getListenAddrsCount()));
    assertThat(message.hasPublicKey()).isTrue();
    assertThat(message.hasObservedAddr()).isTrue();
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void responder_shouldFailAndClose_whenTheWriteIsNotDoneWithinTheTimeout() {
    final List<Object> held = new ArrayList<>();
    stream.pipeline().addLast(new ChannelOutboundHandlerAdapter() {
      @Override
      public void write(final ChannelHandlerContext ctx, final Object msg,
          final ChannelPromise promise) {
        held.add(msg);
      }
    });
    final CompletableFuture<Void> sent = identify.installResponder(stream, null);
    stream.advanceTimeBy(6, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(failure(sent)).isInstanceOf(TimeoutException.class);
    assertThat(stream.isOpen()).isFalse();
    held.forEach(ReferenceCountUtil::release);
  }

  @Test
  void responder_shouldFailAndClose_whenTheWriteFails() {
    stream.pipeline().addLast(new ChannelOutboundHandlerAdapter() {
      @Override
      public void write(final ChannelHandlerContext ctx, final Object msg,
          final ChannelPromise promise) {
        ReferenceCountUtil.release(msg);
        promise.setFailure(new IOException("stream reset"));
      }
    });
    final CompletableFuture<Void> sent = identify.installResponder(stream, null);
    assertThat(failure(sent)).isInstanceOf(IOException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void responder_shouldFailWithInternalErrorAndClose_whenTheHostSupplierThrows() {
    final IdentifyLocal broken = IdentifyLocal.of(ourKey.publicKey(), AGENT, ourAddrs::get,
        () -> {
          throw new IllegalStateException("registrar not ready");
        });
    final CompletableFuture<Void> sent =
        new IdentifyProtocol(broken, IdentifyConfig.DEFAULT).installResponder(stream, null);
    assertThat(failure(sent)).isInstanceOf(InternalErrorException.class);
    assertThat(stream.drainOutbound()).isEmpty();
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void responder_shouldSendWhenTheStreamBecomesActive_whenInstalledBeforeActivation() {
    final TestStream inactive = new TestStream(false);
    try {
      final CompletableFuture<Void> sent = new CompletableFuture<>();
      inactive.pipeline().addLast(identify.newResponder(null, sent));
      assertThat(sent).isNotDone();
      inactive.activate();
      assertThat(sent).isCompleted();
      assertThat(inactive.drainOutbound()).isNotEmpty();
    } finally {
      assertThat(inactive.finishAndCountUnreleased()).as("unreleased bytes").isZero();
    }
  }

  // ---- initiator

  @Test
  void initiator_shouldDecodeJsMessage_whenOneMessageThenFin() throws IOException {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    stream.receive(frame(jsOrder(jsIdentify())));
    assertThat(result).isNotDone();
    stream.receiveFin();
    final IdentifyResult r = result.join();
    assertThat(r.peerId()).isEqualTo(remoteId);
    assertThat(r.publicKey()).contains(remoteKey.publicKey());
    assertThat(r.protocolVersion()).contains("ipfs/0.1.0");
    assertThat(r.agentVersion()).contains(JS_AGENT);
    assertThat(r.listenAddrs()).containsExactly(ma("/ip4/192.168.1.20/tcp/4001"),
        ma("/ip4/127.0.0.1/tcp/4001"), ma("/ip4/192.168.1.20/tcp/4002/ws"));
    assertThat(r.skippedListenAddrs()).isZero();
    assertThat(r.observedAddr()).contains(ma("/ip4/203.0.113.5/tcp/4001").withPeerId(ourId));
    assertThat(r.protocols()).isEqualTo(JS_PROTOCOLS);
    assertThat(r.supports("/meshsub/1.2.0")).isTrue();
    assertThat(r.supports("/ipfs/bitswap/1.2.0")).isTrue();
    assertThat(r.signedPeerRecord()).hasValueSatisfying(
        spr -> assertThat(spr).isEqualTo(HexFormat.of().parseHex("0a2408011220abcdef")));
    assertThat(stream.isOpen()).isFalse();
    assertThat(stream.drainOutbound()).isEmpty();
  }

  @Test
  void jsOrderEncoding_shouldParseToTheSameMessage_asFieldNumberOrder() throws IOException {
    final Identify js = jsIdentify();
    assertThat(jsOrder(js)).isNotEqualTo(js.toByteArray());
    assertThat(Identify.parseFrom(jsOrder(js))).isEqualTo(js);
  }

  @Test
  void initiator_shouldMergeMessages_whenSeveralArriveBeforeFin() throws IOException {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    final Identify first = Identify.newBuilder()
        .setProtocolVersion("ipfs/0.1.0")
        .setAgentVersion("go-libp2p/0.41.0")
        .setPublicKey(ByteString.copyFrom(remoteKey.publicKey().marshal()))
        .addListenAddrs(bytes(ma("/ip4/192.0.2.1/tcp/4001")))
        .addProtocols("/ipfs/id/1.0.0").addProtocols("/meshsub/1.1.0")
        .build();
    final Identify second = Identify.newBuilder()
        .addListenAddrs(bytes(ma("/ip4/192.0.2.1/tcp/4001")))
        .addListenAddrs(bytes(ma("/ip6/2001:db8::1/tcp/4001")))
        .addProtocols("/meshsub/1.1.0").addProtocols("/ipfs/bitswap/1.2.0")
        .setObservedAddr(bytes(ma("/ip4/203.0.113.5/tcp/4001")))
        .build();
    final Identify third = Identify.newBuilder()
        .setAgentVersion("go-libp2p/0.41.1")
        .setSignedPeerRecord(ByteString.copyFromUtf8("envelope"))
        .build();
    final byte[] wire = concat(frame(first), frame(second), frame(third));
    // Several frames in one read, then the rest split inside a length prefix and a body.
    final int cut1 = frame(first).length + 1;
    final int cut2 = wire.length - 3;
    stream.receive(Arrays.copyOfRange(wire, 0, cut1));
    stream.receive(Arrays.copyOfRange(wire, cut1, cut2));
    stream.receive(Arrays.copyOfRange(wire, cut2, wire.length));
    assertThat(result).isNotDone();
    stream.receiveFin();
    final IdentifyResult r = result.join();
    assertThat(r.agentVersion()).contains("go-libp2p/0.41.1");
    assertThat(r.protocolVersion()).contains("ipfs/0.1.0");
    assertThat(r.publicKey()).contains(remoteKey.publicKey());
    assertThat(r.listenAddrs()).containsExactly(
        ma("/ip4/192.0.2.1/tcp/4001"), ma("/ip6/2001:db8::1/tcp/4001"));
    assertThat(r.protocols())
        .containsExactly("/ipfs/id/1.0.0", "/meshsub/1.1.0", "/ipfs/bitswap/1.2.0");
    assertThat(r.observedAddr()).contains(ma("/ip4/203.0.113.5/tcp/4001"));
    assertThat(r.signedPeerRecord()).hasValueSatisfying(
        spr -> assertThat(spr).isEqualTo("envelope".getBytes(UTF_8)));
    assertThat(stream.isOpen()).isFalse();
  }

  private static byte[] concat(final byte[]... parts) {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (final byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }

  @Test
  void initiator_shouldStopAndClose_whenMaxMessagesArrived() {
    final IdentifyProtocol two = new IdentifyProtocol(local,
        IdentifyConfig.builder().maxMessages(2).build());
    final CompletableFuture<IdentifyResult> result = two.installInitiator(stream, remoteId);
    final Identify keyOnly = Identify.newBuilder()
        .setPublicKey(ByteString.copyFrom(remoteKey.publicKey().marshal())).build();
    stream.receive(concat(frame(keyOnly),
        frame(Identify.newBuilder().addProtocols("/a/1").build()),
        frame(Identify.newBuilder().addProtocols("/b/1").build())));
    assertThat(result.join().protocols()).containsExactly("/a/1");
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void initiator_shouldFailWithBadPeer_whenPublicKeyIsAnotherPeers() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    final Identify impostor = jsIdentify().toBuilder()
        .setPublicKey(ByteString.copyFrom(Keys.generate(KeyType.ED25519, random).publicKey()
            .marshal()))
        .build();
    stream.receive(frame(impostor));
    assertThat(failure(result)).isInstanceOf(BadPeerException.class)
        .hasMessageContaining(remoteId.toString());
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void initiator_shouldFailWithBadPeer_whenPublicKeyIsMalformed() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    stream.receive(frame(jsIdentify().toBuilder()
        .setPublicKey(ByteString.copyFrom(new byte[] {8, 1, 18, 3, 1, 2, 3})).build()));
    assertThat(failure(result)).isInstanceOf(BadPeerException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void initiator_shouldFailWithViolation_whenPublicKeyIsMissing() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    stream.receive(frame(jsIdentify().toBuilder().clearPublicKey().build()));
    stream.receiveFin();
    assertThat(failure(result)).isInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("public key");
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void initiator_shouldFailWithViolationAndClose_whenMessageExceeds8KiB() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    final Identify.Builder big = jsIdentify().toBuilder();
    while (big.build().getSerializedSize() <= 8192) {
      big.addProtocols("/orbitdb/heads/orbitdb/zdpuAnDqkR8Hq3KMoFNc4F5mqcN7xRQ1K9BTvT5N7pLuz");
    }
    stream.receive(frame(big.build()));
    assertThat(failure(result)).isInstanceOf(ProtocolViolationException.class)
        .hasMessageContaining("exceeds the limit of 8192");
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void initiator_shouldAcceptAMessageOfExactly8KiB() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    final Identify.Builder b = jsIdentify().toBuilder().clearSignedPeerRecord();
    final int room = 8192 - b.build().getSerializedSize();
    // One more opaque field fills the message to the byte: tag (1) + length (2) + data.
    b.setSignedPeerRecord(ByteString.copyFrom(new byte[room - 3]));
    assertThat(b.build().getSerializedSize()).isEqualTo(8192);
    stream.receive(frame(b.build()));
    stream.receiveFin();
    assertThat(result).isCompleted();
  }

  @Test
  void initiator_shouldFailWithViolation_whenMessageIsNotAProtobuf() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    stream.receive(frame(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff}));
    assertThat(failure(result)).isInstanceOf(ProtocolViolationException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void initiator_shouldSkipUndecodableListenAddrs_andKeepTheOthers() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    stream.receive(frame(jsIdentify().toBuilder()
        .clearListenAddrs()
        .addListenAddrs(bytes(ma("/ip4/192.0.2.1/tcp/4001")))
        .addListenAddrs(ByteString.copyFrom(UNKNOWN_CODE_ADDR))
        .addListenAddrs(ByteString.EMPTY)
        .addListenAddrs(ByteString.copyFrom(new byte[] {6, 0x0f}))
        .addListenAddrs(bytes(ma("/ip4/192.0.2.1/udp/4001/quic-v1")))
        .setObservedAddr(ByteString.copyFrom(UNKNOWN_CODE_ADDR))
        .build()));
    stream.receiveFin();
    final IdentifyResult r = result.join();
    assertThat(r.listenAddrs()).containsExactly(
        ma("/ip4/192.0.2.1/tcp/4001"), ma("/ip4/192.0.2.1/udp/4001/quic-v1"));
    assertThat(r.skippedListenAddrs()).isEqualTo(3);
    assertThat(r.observedAddr()).isEmpty();
    assertThat(r.protocols()).isEqualTo(JS_PROTOCOLS);
  }

  @Test
  void initiator_shouldFailWithViolation_whenFinArrivesBeforeAnyMessage() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    stream.receiveFin();
    assertThat(failure(result)).isInstanceOf(ProtocolViolationException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void initiator_shouldFailWithViolation_whenFinCutsAMessage() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    final byte[] wire = frame(jsIdentify());
    stream.receive(Arrays.copyOf(wire, wire.length - 1));
    stream.receiveFin();
    assertThat(failure(result)).isInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void initiator_shouldTimeOutAndClose_whenNoMessageWithin5Seconds() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    stream.advanceTimeBy(4, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(result).isNotDone();
    stream.advanceTimeBy(2, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(failure(result)).isInstanceOf(TimeoutException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void initiator_shouldUseTheMessagesRead_whenTimeoutHitsBeforeFin() {
    final IdentifyProtocol slow = new IdentifyProtocol(local,
        IdentifyConfig.builder().timeout(Duration.ofSeconds(2)).build());
    final CompletableFuture<IdentifyResult> result = slow.installInitiator(stream, remoteId);
    stream.receive(frame(jsIdentify()));
    stream.advanceTimeBy(3, TimeUnit.SECONDS);
    stream.runScheduledPendingTasks();
    assertThat(result.join().agentVersion()).contains(JS_AGENT);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void initiator_shouldFailClosed_whenStreamIsResetBeforeFin() {
    final CompletableFuture<IdentifyResult> result = identify.installInitiator(stream, remoteId);
    stream.receive(frame(jsIdentify()));
    stream.close();
    assertThat(failure(result)).isInstanceOf(ClosedChannelException.class);
  }

  // ---- push

  @Test
  void pushInitiator_shouldSendOurIdentifyWithoutObservedAddr_thenClose() throws IOException {
    final CompletableFuture<Void> sent = push.installInitiator(stream);
    final List<Identify> messages = parseFrames(stream.drainOutbound());
    assertThat(messages).hasSize(1);
    final Identify m = messages.get(0);
    assertThat(m.hasObservedAddr()).isFalse();
    assertThat(m.getPublicKey().toByteArray()).isEqualTo(ourKey.publicKey().marshal());
    assertThat(m.getProtocolsList()).isEqualTo(OUR_PROTOCOLS);
    assertThat(m.getListenAddrsCount()).isEqualTo(2);
    assertThat(sent).isCompleted();
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void pushResponder_shouldDeliverPartialUpdate_andMergeItLikeJs() {
    final IdentifyResult before = identifyRemote(jsIdentify());
    // js-libp2p's push: listenAddrs, signedPeerRecord, protocols, agent and protocol version;
    // no public key, no observed address.
    final Identify jsPush = Identify.newBuilder()
        .setProtocolVersion("ipfs/0.1.0")
        .setAgentVersion(JS_AGENT)
        .addListenAddrs(bytes(ma("/ip4/192.168.1.20/tcp/4001")))
        // a relayed address keeps the relay's /p2p; only the trailing /p2p/<self> is cut
        .addListenAddrs(bytes(ma("/ip4/198.51.100.1/tcp/4001/p2p/" + ourId + "/p2p-circuit")))
        .addAllProtocols(JS_PROTOCOLS)
        .addProtocols("/orbitdb/heads/orbitdb/zdpuAnDqkR8Hq3KMoFNc4F5mqcN7xRQ1K9BTvT5N7pLuz")
        .setSignedPeerRecord(ByteString.copyFromUtf8("newer envelope"))
        .build();
    final CompletableFuture<IdentifyResult> update = push.installResponder(stream, remoteId);
    stream.receive(frame(jsOrderUnchecked(jsPush)));
    stream.receiveFin();
    final IdentifyResult u = update.join();
    assertThat(u.publicKey()).isEmpty();
    assertThat(u.observedAddr()).isEmpty();
    assertThat(stream.isOpen()).isFalse();

    final IdentifyResult after = before.updatedWith(u);
    assertThat(after.publicKey()).contains(remoteKey.publicKey());
    assertThat(after.observedAddr()).isEqualTo(before.observedAddr());
    assertThat(after.protocols()).endsWith(
        "/orbitdb/heads/orbitdb/zdpuAnDqkR8Hq3KMoFNc4F5mqcN7xRQ1K9BTvT5N7pLuz");
    assertThat(after.listenAddrs()).hasSize(2).contains(ma("/ip4/192.168.1.20/tcp/4001"));
    assertThat(after.signedPeerRecord()).hasValueSatisfying(spr -> assertThat(spr)
        .isEqualTo("newer envelope".getBytes(UTF_8)));
  }

  @Test
  void updatedWith_shouldLeaveFieldsUntouched_whenPushLacksThem() {
    final IdentifyResult before = identifyRemote(jsIdentify());
    final CompletableFuture<IdentifyResult> update = push.installResponder(stream, remoteId);
    stream.receive(frame(Identify.newBuilder().setAgentVersion("js-libp2p/3.3.12").build()));
    stream.receiveFin();
    final IdentifyResult after = before.updatedWith(update.join());
    assertThat(after.agentVersion()).contains("js-libp2p/3.3.12");
    assertThat(after.protocols()).isEqualTo(before.protocols());
    assertThat(after.listenAddrs()).isEqualTo(before.listenAddrs());
    assertThat(after.protocolVersion()).isEqualTo(before.protocolVersion());
    assertThat(after.signedPeerRecord()).hasValueSatisfying(
        spr -> assertThat(spr).isEqualTo(before.signedPeerRecord().orElseThrow()));
    assertThat(after.updatedWith(update.join())).isEqualTo(after);
  }

  @Test
  void updatedWith_shouldEmptyTheAddresses_whenPushSentOnlyUndecodableOnes() {
    final IdentifyResult before = identifyRemote(jsIdentify());
    final CompletableFuture<IdentifyResult> update = push.installResponder(stream, remoteId);
    stream.receive(frame(Identify.newBuilder()
        .addListenAddrs(ByteString.copyFrom(UNKNOWN_CODE_ADDR)).build()));
    stream.receiveFin();
    final IdentifyResult after = before.updatedWith(update.join());
    assertThat(after.listenAddrs()).isEmpty();
    assertThat(after.skippedListenAddrs()).isEqualTo(1);
  }

  @Test
  void updatedWith_shouldRefuse_whenPushIsAboutAnotherPeer() {
    final IdentifyResult before = identifyRemote(jsIdentify());
    final CompletableFuture<IdentifyResult> update = push.installResponder(stream, ourId);
    stream.receive(frame(Identify.newBuilder().setAgentVersion("x").build()));
    stream.receiveFin();
    assertThatThrownBy(() -> before.updatedWith(update.join()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void pushResponder_shouldFailWithBadPeer_whenPublicKeyDoesNotMatch() {
    final CompletableFuture<IdentifyResult> update = push.installResponder(stream, remoteId);
    stream.receive(frame(Identify.newBuilder()
        .setPublicKey(ByteString.copyFrom(ourKey.publicKey().marshal()))
        .addProtocols("/ipfs/id/1.0.0").build()));
    assertThat(failure(update)).isInstanceOf(BadPeerException.class);
    assertThat(stream.isOpen()).isFalse();
  }

  @Test
  void pushResponder_shouldMergeSeveralMessages_beforeFin() {
    final CompletableFuture<IdentifyResult> update = push.installResponder(stream, remoteId);
    stream.receive(concat(
        frame(Identify.newBuilder().addProtocols("/a/1").build()),
        frame(Identify.newBuilder().addProtocols("/b/1").setAgentVersion("v2").build())));
    stream.receiveFin();
    assertThat(update.join().protocols()).containsExactly("/a/1", "/b/1");
    assertThat(update.join().agentVersion()).contains("v2");
  }

  private byte[] jsOrderUnchecked(final Identify message) {
    try {
      return jsOrder(message);
    } catch (final IOException e) {
      throw new AssertionError(e);
    }
  }

  /** The result of identifying the remote with {@code message}, on a stream of its own. */
  private IdentifyResult identifyRemote(final Identify message) {
    final TestStream other = new TestStream();
    try {
      final CompletableFuture<IdentifyResult> result = identify.installInitiator(other, remoteId);
      other.receive(frame(message));
      other.receiveFin();
      return result.join();
    } finally {
      assertThat(other.finishAndCountUnreleased()).as("unreleased bytes").isZero();
    }
  }

  // ---- both ends

  @Test
  void identify_shouldDeliverTheResponderInfo_whenInitiatorAndResponderAreLinked() {
    final TestStream responderSide = new TestStream();
    try {
      // We identify ourselves to a peer whose connection to us has remote peer ourId.
      final CompletableFuture<IdentifyResult> result =
          identify.installInitiator(stream, ourId);
      final CompletableFuture<Void> sent =
          identify.installResponder(responderSide, ma("/ip4/198.51.100.7/tcp/53122"));
      TestStream.link(stream, responderSide).pump();
      assertThat(sent).isCompleted();
      final IdentifyResult r = result.join();
      assertThat(r.publicKey()).contains(ourKey.publicKey());
      assertThat(r.agentVersion()).contains("relay-pinner/0.1.0");
      assertThat(r.protocols()).isEqualTo(OUR_PROTOCOLS);
      assertThat(r.listenAddrs()).containsExactly(ma("/ip4/203.0.113.5/tcp/4001"),
          ma("/dns4/relay.example/tcp/443/tls/sni/relay.example/ws"));
      assertThat(r.observedAddr()).contains(ma("/ip4/198.51.100.7/tcp/53122"));
      assertThat(stream.isOpen()).isFalse();
      assertThat(responderSide.isOpen()).isFalse();
    } finally {
      assertThat(responderSide.finishAndCountUnreleased()).as("unreleased bytes").isZero();
    }
  }

  @Test
  void push_shouldDeliverOurUpdate_whenInitiatorAndResponderAreLinked() {
    final TestStream receiverSide = new TestStream();
    try {
      final CompletableFuture<Void> sent = push.installInitiator(stream);
      final CompletableFuture<IdentifyResult> update =
          push.installResponder(receiverSide, ourId);
      TestStream.link(stream, receiverSide).pump();
      assertThat(sent).isCompleted();
      assertThat(update.join().protocols()).isEqualTo(OUR_PROTOCOLS);
      assertThat(update.join().observedAddr()).isEmpty();
      assertThat(receiverSide.isOpen()).isFalse();
    } finally {
      assertThat(receiverSide.finishAndCountUnreleased()).as("unreleased bytes").isZero();
    }
  }

  // ---- config and local

  @Test
  void build_shouldRejectLimits_whenOutOfRange() {
    assertThatThrownBy(() -> IdentifyConfig.builder().maxMessageSize(100).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxMessageSize");
    assertThatThrownBy(() -> IdentifyConfig.builder().maxMessages(0).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxMessages");
    assertThatThrownBy(() -> IdentifyConfig.builder().timeout(Duration.ofSeconds(-1)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout");
    assertThat(IdentifyConfig.DEFAULT).isEqualTo(
        new IdentifyConfig(8192, 10, Duration.ofSeconds(5)));
    assertThat(IdentifyConfig.DEFAULT.toBuilder().build()).isEqualTo(IdentifyConfig.DEFAULT);
  }

  @Test
  void of_shouldRejectAgentVersion_whenBlankOrTooLong() {
    assertThatThrownBy(() -> IdentifyLocal.of(ourKey.publicKey(), " ", List::of, List::of))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IdentifyLocal.of(ourKey.publicKey(), "a".repeat(257), List::of,
        List::of)).isInstanceOf(IllegalArgumentException.class);
    assertThat(IdentifyLocal.agentVersion("1.2.3")).isEqualTo("relay-pinner/1.2.3");
  }
}
