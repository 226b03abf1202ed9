package io.relaypinner.libp2p.security.noise;

import static io.relaypinner.libp2p.security.noise.NoiseTestSupport.once;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import io.relaypinner.testkit.TestVectors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Noise-wiki test vectors for {@code Noise_XX_25519_ChaChaPoly_SHA256} from cacophony and snow
 * (src/test/resources/vectors/noise/): every handshake and transport ciphertext, both roles, and the handshake
 * hash where the vector has one.
 */
class NoiseVectorsTest {
  private static final HexFormat HEX = HexFormat.of();

  private record Message(byte[] payload, String ciphertext) {}

  private record Vector(
      byte[] initPrologue,
      byte[] initStatic,
      byte[] initEphemeral,
      byte[] respPrologue,
      byte[] respStatic,
      byte[] respEphemeral,
      String handshakeHash,
      List<Message> messages) {}

  private static List<Vector> load(final String file) throws IOException {
    final Path path = TestVectors.path(file);
    final JsonNode root = new ObjectMapper().readTree(path.toFile());
    final List<Vector> vectors = new ArrayList<>();
    for (final JsonNode v : root.get("vectors")) {
      assertThat(v.get("protocol_name").asText()).isEqualTo(HandshakeState.PROTOCOL_NAME);
      final List<Message> messages = new ArrayList<>();
      for (final JsonNode m : v.get("messages")) {
        messages.add(
            new Message(HEX.parseHex(m.get("payload").asText()), m.get("ciphertext").asText()));
      }
      vectors.add(
          new Vector(
              hex(v, "init_prologue"),
              hex(v, "init_static"),
              hex(v, "init_ephemeral"),
              hex(v, "resp_prologue"),
              hex(v, "resp_static"),
              hex(v, "resp_ephemeral"),
              v.has("handshake_hash") ? v.get("handshake_hash").asText() : null,
              messages));
    }
    assertThat(vectors).isNotEmpty();
    return vectors;
  }

  private static byte[] hex(final JsonNode node, final String field) {
    return HEX.parseHex(node.get(field).asText());
  }

  private static HandshakeState initiator(final Vector v) {
    return new HandshakeState(
        true,
        v.initPrologue(),
        X25519KeyPair.fromPrivateKey(v.initStatic()),
        once(X25519KeyPair.fromPrivateKey(v.initEphemeral())));
  }

  private static HandshakeState responder(final Vector v) {
    return new HandshakeState(
        false,
        v.respPrologue(),
        X25519KeyPair.fromPrivateKey(v.respStatic()),
        once(X25519KeyPair.fromPrivateKey(v.respEphemeral())));
  }

  /** Runs the three handshake messages, checking each ciphertext and payload. */
  private static void handshake(
      final Vector v, final HandshakeState init, final HandshakeState resp) {
    for (int i = 0; i < HandshakeState.MESSAGE_COUNT; i++) {
      final HandshakeState sender = i % 2 == 0 ? init : resp;
      final HandshakeState receiver = i % 2 == 0 ? resp : init;
      final Message m = v.messages().get(i);
      final byte[] ciphertext = sender.writeMessage(m.payload());
      assertThat(HEX.formatHex(ciphertext))
          .as("handshake message %d", i + 1)
          .isEqualTo(m.ciphertext());
      assertThat(receiver.readMessage(ciphertext)).as("payload %d", i + 1).isEqualTo(m.payload());
    }
    assertThat(init.isComplete()).isTrue();
    assertThat(resp.isComplete()).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "noise/cacophony-Noise_XX_25519_ChaChaPoly_SHA256.json",
        "noise/snow-Noise_XX_25519_ChaChaPoly_SHA256.json"
      })
  void handshake_shouldReproduceVectorCiphertextsAndHash_whenKeysAreFixed(final String file)
      throws IOException {
    for (final Vector v : load(file)) {
      final HandshakeState init = initiator(v);
      final HandshakeState resp = responder(v);
      handshake(v, init, resp);
      assertThat(init.handshakeHash()).isEqualTo(resp.handshakeHash());
      if (v.handshakeHash() != null) {
        assertThat(HEX.formatHex(init.handshakeHash())).isEqualTo(v.handshakeHash());
      }
      assertThat(init.remoteStaticKey())
          .isEqualTo(X25519KeyPair.fromPrivateKey(v.respStatic()).publicKey());
      assertThat(resp.remoteStaticKey())
          .isEqualTo(X25519KeyPair.fromPrivateKey(v.initStatic()).publicKey());
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "noise/cacophony-Noise_XX_25519_ChaChaPoly_SHA256.json",
        "noise/snow-Noise_XX_25519_ChaChaPoly_SHA256.json"
      })
  void transportCiphers_shouldReproduceVectorMessages_whenBothRolesSplit(final String file)
      throws IOException {
    for (final Vector v : load(file)) {
      final HandshakeState init = initiator(v);
      final HandshakeState resp = responder(v);
      handshake(v, init, resp);
      final TransportCiphers initCiphers = init.split();
      final TransportCiphers respCiphers = resp.split();
      // After the handshake the messages keep alternating: the responder sends message 4.
      for (int i = HandshakeState.MESSAGE_COUNT; i < v.messages().size(); i++) {
        final boolean fromInitiator = i % 2 == 0;
        final CipherState send = fromInitiator ? initCiphers.send() : respCiphers.send();
        final CipherState receive = fromInitiator ? respCiphers.receive() : initCiphers.receive();
        final Message m = v.messages().get(i);
        final ByteBuffer ciphertext = ByteBuffer.allocate(m.payload().length + 16);
        send.encrypt(ByteBuffer.wrap(m.payload()), ciphertext);
        assertThat(HEX.formatHex(ciphertext.array()))
            .as("transport message %d", i + 1)
            .isEqualTo(m.ciphertext());
        // Direct buffers on the receiving side, as Netty's socket buffers usually are.
        final ByteBuffer in = ByteBuffer.allocateDirect(ciphertext.capacity());
        in.put(ciphertext.array()).flip();
        final ByteBuffer out = ByteBuffer.allocateDirect(m.payload().length);
        receive.decrypt(in, out);
        final byte[] plaintext = new byte[m.payload().length];
        out.flip().get(plaintext);
        assertThat(plaintext).isEqualTo(m.payload());
      }
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "noise/cacophony-Noise_XX_25519_ChaChaPoly_SHA256.json",
        "noise/snow-Noise_XX_25519_ChaChaPoly_SHA256.json"
      })
  void transportCodec_shouldFrameVectorCiphertexts_whenInstalledAfterVectorHandshake(
      final String file) throws IOException {
    for (final Vector v : load(file)) {
      final HandshakeState init = initiator(v);
      final HandshakeState resp = responder(v);
      handshake(v, init, resp);
      final NoiseTestSupport.TrackingAllocator alloc = new NoiseTestSupport.TrackingAllocator(true);
      final EmbeddedChannel initChannel =
          NoiseTestSupport.channel(
              alloc, new NoiseTransportCodec(init.split(), NoiseConfig.DEFAULT));
      final EmbeddedChannel respChannel =
          NoiseTestSupport.channel(
              alloc, new NoiseTransportCodec(resp.split(), NoiseConfig.DEFAULT));
      for (int i = HandshakeState.MESSAGE_COUNT; i < v.messages().size(); i++) {
        final boolean fromInitiator = i % 2 == 0;
        final EmbeddedChannel sender = fromInitiator ? initChannel : respChannel;
        final EmbeddedChannel receiver = fromInitiator ? respChannel : initChannel;
        final Message m = v.messages().get(i);
        sender.writeOutbound(alloc.of(m.payload()));
        final byte[] wire = NoiseTestSupport.drainOutbound(sender);
        assertThat(HEX.formatHex(wire))
            .isEqualTo(HEX.formatHex(NoiseTestSupport.frame(HEX.parseHex(m.ciphertext()))));
        receiver.writeInbound(alloc.of(wire));
        final ByteBuf plaintext = receiver.readInbound();
        try {
          assertThat(ByteBufUtil.getBytes(plaintext)).isEqualTo(m.payload());
        } finally {
          plaintext.release();
        }
      }
      assertThat(initChannel.finishAndReleaseAll()).isFalse();
      assertThat(respChannel.finishAndReleaseAll()).isFalse();
      alloc.assertAllReleased();
    }
  }
}
