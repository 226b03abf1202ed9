package io.relaypinner.multiformats;

import static io.relaypinner.multiformats.TestData.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.multiformats.Multibase.Base;
import io.relaypinner.testkit.TestVectors;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PeerIdTest {
  private static JsonNode vectors() throws IOException {
    return new ObjectMapper().readTree(
        TestVectors.path("peer-ids/peer-ids-vectors.json").toFile());
  }

  @Test
  void fromPublicKey_shouldMatchSpecRule_forEveryPublicKeyVector() throws IOException {
    int count = 0;
    for (final JsonNode v : vectors().get("key_vectors")) {
      if (!v.get("kind").asText().equals("public")) {
        continue;
      }
      final String type = v.get("key_type").asText();
      final byte[] key = hex(v.get("protobuf_hex").asText().toLowerCase());
      final PeerId id = PeerId.fromPublicKey(key);
      if (type.equals("Ed25519") || type.equals("Secp256k1")) {
        assertThat(id.isIdentity()).as(type).isTrue();
        assertThat(id.publicKeyBytes()).hasValueSatisfying(k -> assertThat(k).isEqualTo(key));
        assertThat(id.multihash()).isEqualTo(Multihash.identity(key));
        assertThat(id.toBase58()).startsWith(type.equals("Ed25519") ? "12D3KooW" : "16Uiu2HA");
      } else {
        assertThat(id.isIdentity()).as(type).isFalse();
        assertThat(id.publicKeyBytes()).isEmpty();
        assertThat(id.multihash()).isEqualTo(Multihash.sha2_256(key));
        assertThat(id.toBase58()).startsWith("Qm");
      }
      assertRoundTrips(id);
      count++;
    }
    assertThat(count).isEqualTo(4);
  }

  @Test
  void parse_shouldAcceptSpecExamples_andEqualTheTwoSha256Forms() throws IOException {
    final List<PeerId> ids = new ArrayList<>();
    for (final JsonNode example : vectors().get("peer_id_examples")) {
      final String text = example.get("peer_id").asText();
      final PeerId id = PeerId.parse(text);
      if (text.startsWith("bafz")) {
        assertThat(id.toCid().toString()).isEqualTo(text);
      } else {
        assertThat(id.toString()).isEqualTo(text);
      }
      assertRoundTrips(id);
      ids.add(id);
    }
    assertThat(ids).hasSize(3);
    assertThat(ids.get(0)).isEqualTo(ids.get(1));
    assertThat(ids.get(0).hashCode()).isEqualTo(ids.get(1).hashCode());
    assertThat(ids.get(0).isIdentity()).isFalse();
    assertThat(ids.get(2)).isNotEqualTo(ids.get(0));
    assertThat(ids.get(2).isIdentity()).isTrue();
    assertThat(ids.get(2).publicKeyBytes().orElseThrow()).startsWith(0x08, 0x01, 0x12, 0x20);
  }

  private static void assertRoundTrips(final PeerId id) {
    assertThat(PeerId.parse(id.toBase58())).isEqualTo(id);
    assertThat(PeerId.parse(id.toCid().toString())).isEqualTo(id);
    assertThat(PeerId.parse(id.toBase36Cid())).isEqualTo(id);
    assertThat(id.toBase36Cid()).startsWith("k");
    assertThat(PeerId.parse(id.toCid().toString(Base.BASE58BTC))).isEqualTo(id);
    assertThat(PeerId.fromBytes(id.bytes())).isEqualTo(id);
    assertThat(id.toCid().codec()).isEqualTo(Multicodec.LIBP2P_KEY.code());
    assertThat(PeerId.fromCid(id.toCid())).isEqualTo(id);
  }

  @Test
  void ed25519_shouldHaveSpecLayout() {
    final byte[] key = new byte[36];
    key[0] = 0x08;
    key[1] = 0x01;
    key[2] = 0x12;
    key[3] = 0x20;
    final PeerId id = PeerId.fromPublicKey(key);
    assertThat(hex(id.bytes())).isEqualTo("002408011220" + "00".repeat(32));
    assertThat(id.toBase36Cid()).startsWith("k51");
    assertThat(id.toCid().toString()).startsWith("bafzaa");
  }

  @Test
  void fromBytes_shouldReject_whenNonIdentityNonSha256Multihash() {
    final byte[] sha512 = Multihash.sha2_512(new byte[0]).bytes();
    assertThatThrownBy(() -> PeerId.fromBytes(sha512))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("PeerId multihash must be identity or sha2-256, got sha2-512");
    assertThatThrownBy(() -> PeerId.fromBytes(hex("1e0100")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("PeerId multihash must be identity or sha2-256, got 0x1e");
  }

  @Test
  void fromBytes_shouldReject_whenIdentityDigestIsNotAKeyOrTooLong() {
    assertThatThrownBy(() -> PeerId.fromBytes(hex("0003616263")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("not a libp2p PublicKey protobuf");
    final byte[] key43 = new byte[43];
    key43[0] = 0x08;
    key43[1] = 0x01;
    key43[2] = 0x12;
    key43[3] = 39;
    assertThatThrownBy(() -> PeerId.fromBytes(Multihash.identity(key43).bytes()))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("identity PeerId digest length 43 exceeds 42");
    // But the same key is fine through fromPublicKey: it is hashed.
    assertThat(PeerId.fromPublicKey(key43).isIdentity()).isFalse();
  }

  @Test
  void fromPublicKey_shouldReject_whenRawKeyOrMalformedProtobuf() {
    assertThatThrownBy(() -> PeerId.fromPublicKey(new byte[32]))
        .isInstanceOf(MultiformatException.class)
        .hasMessage(
            "not a libp2p PublicKey protobuf (32 bytes): expected field 1 (0x08) at offset 0");
    assertThatThrownBy(() -> PeerId.fromPublicKey(hex("0804122000")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("unknown key type 4 at offset 1");
    assertThatThrownBy(() -> PeerId.fromPublicKey(hex("0801122000")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("key data length 32 but 1 bytes follow");
    assertThatThrownBy(() -> PeerId.fromPublicKey(hex("0801180100")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("expected field 2 (0x12) at offset 2");
    assertThatThrownBy(() -> PeerId.fromPublicKey(hex("08011280")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated varint");
  }

  @Test
  void parse_shouldReject_whenWrongCodecOrBadText() {
    final Cid raw = Cid.v1(Multicodec.RAW, Multihash.sha2_256(new byte[0]));
    assertThatThrownBy(() -> PeerId.parse(raw.toString()))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("codec libp2p-key (0x72), got CIDv1 raw");
    assertThatThrownBy(() -> PeerId.parse(""))
        .isInstanceOf(MultiformatException.class).hasMessage("empty PeerId text");
    assertThatThrownBy(() -> PeerId.parse("12D3KooW0"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("invalid base58btc character '0' at position 8");
    assertThatThrownBy(() -> PeerId.parse("1".repeat(300)))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("exceeds the limit of 256");
    assertThatThrownBy(() -> PeerId.parse("QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5"))
        .isInstanceOf(MultiformatException.class);
  }
}
