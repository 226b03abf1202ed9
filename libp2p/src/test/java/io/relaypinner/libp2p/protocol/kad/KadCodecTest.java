package io.relaypinner.libp2p.protocol.kad;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.protocol.kad.pb.KadProtos;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KadCodecTest {
  private static final KadCodec.Limits LIMITS = new KadCodec.Limits(256, 3, 2);
  private final Random random = new Random(1);

  @Test
  void encodeDecode_shouldRoundTrip_whenPeersAndKeyAreSet() {
    final PeerId a = KadTestPeers.random(random);
    final PeerId b = KadTestPeers.random(random);
    final byte[] key = KadTestPeers.contentKey(random);
    final KadMessage message = new KadMessage(KadMessage.Type.GET_PROVIDERS, key,
        List.of(new KadPeer(a, List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/4001")))),
        List.of(new KadPeer(b, List.of(Multiaddr.parse("/dns4/example.com/tcp/443/wss")))),
        false);

    final KadMessage decoded = KadCodec.decode(KadCodec.encode(message), LIMITS);

    assertThat(decoded.type()).isEqualTo(KadMessage.Type.GET_PROVIDERS);
    assertThat(decoded.key()).isEqualTo(key);
    assertThat(decoded.closerPeers()).isEqualTo(message.closerPeers());
    assertThat(decoded.providerPeers()).isEqualTo(message.providerPeers());
  }

  @Test
  void decode_shouldReadTheSpecFieldNumbers_whenBytesAreHandWritten() {
    // type=FIND_NODE (08 04), key=0x0102 (12 02 01 02), clusterLevelRaw=0 (50 00),
    // closerPeers[0] = {id = sha2-256 multihash of 32 x 0x11}.
    final String id = "1220" + "11".repeat(32);
    final byte[] bytes = HexFormat.of().parseHex("0804" + "12020102" + "5000" + "4224" + "0a22"
        + id);

    final KadMessage decoded = KadCodec.decode(bytes, LIMITS);

    assertThat(decoded.type()).isEqualTo(KadMessage.Type.FIND_NODE);
    assertThat(decoded.key()).containsExactly(1, 2);
    assertThat(decoded.closerPeers()).extracting(p -> HexFormat.of().formatHex(p.id().bytes()))
        .containsExactly(id);
  }

  @Test
  void decode_shouldKeepTheFirstPeersAndAddresses_whenOverTheLimits() {
    final KadProtos.Message.Builder message = KadProtos.Message.newBuilder()
        .setType(KadProtos.Message.MessageType.FIND_NODE);
    for (int i = 0; i < 10; i++) {
      final KadProtos.Message.Peer.Builder peer = KadProtos.Message.Peer.newBuilder()
          .setId(ByteString.copyFrom(KadTestPeers.random(random).bytes()));
      for (int port = 1; port <= 5; port++) {
        peer.addAddrs(ByteString.copyFrom(Multiaddr.parse("/ip4/10.0.0.1/tcp/" + port).bytes()));
      }
      message.addCloserPeers(peer);
    }

    final KadMessage decoded = KadCodec.decode(message.build().toByteArray(), LIMITS);

    assertThat(decoded.closerPeers()).hasSize(3);
    assertThat(decoded.closerPeers()).allSatisfy(p -> assertThat(p.addresses()).hasSize(2));
  }

  @Test
  void decode_shouldSkipBadPeersAndAddresses_whenOthersAreGood() {
    final PeerId good = KadTestPeers.random(random);
    final KadProtos.Message message = KadProtos.Message.newBuilder()
        .setType(KadProtos.Message.MessageType.GET_PROVIDERS)
        .addProviderPeers(KadProtos.Message.Peer.newBuilder()
            .setId(ByteString.copyFrom(new byte[] {1, 2, 3})))
        .addProviderPeers(KadProtos.Message.Peer.newBuilder()
            .setId(ByteString.copyFrom(good.bytes()))
            .addAddrs(ByteString.copyFrom(new byte[] {(byte) 0xff, 0x7f}))
            .addAddrs(ByteString.copyFrom(Multiaddr.parse("/ip4/1.2.3.4/tcp/1").bytes())))
        .build();

    final KadMessage decoded = KadCodec.decode(message.toByteArray(), LIMITS);

    assertThat(decoded.providerPeers()).containsExactly(
        new KadPeer(good, List.of(Multiaddr.parse("/ip4/1.2.3.4/tcp/1"))));
  }

  @Test
  void decode_shouldRefuse_whenKeyIsTooLongOrBytesAreGarbage() {
    final byte[] longKey = KadProtos.Message.newBuilder()
        .setKey(ByteString.copyFrom(new byte[257])).build().toByteArray();

    assertThatThrownBy(() -> KadCodec.decode(longKey, LIMITS))
        .isInstanceOf(ProtocolViolationException.class);
    assertThatThrownBy(() -> KadCodec.decode(new byte[] {0x12, 0x7f, 0x01}, LIMITS))
        .isInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void decode_shouldMarkUnknownTypesAndRecords_whenPresent() {
    final byte[] bytes = KadProtos.Message.newBuilder().setTypeValue(42)
        .setRecord(KadProtos.Record.newBuilder().setValue(ByteString.copyFromUtf8("v")))
        .build().toByteArray();

    final KadMessage decoded = KadCodec.decode(bytes, LIMITS);

    assertThat(decoded.type()).isEqualTo(KadMessage.Type.UNKNOWN);
    assertThat(decoded.hasRecord()).isTrue();
  }
}
