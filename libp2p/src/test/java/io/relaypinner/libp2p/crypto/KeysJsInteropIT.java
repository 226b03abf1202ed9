package io.relaypinner.libp2p.crypto;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.testkit.NodeJs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keys, PeerIds and signatures agree byte for byte with js-libp2p ({@code @libp2p/crypto} 5,
 * {@code @libp2p/peer-id} 6), in both directions: interop/js/formats/crypto-values.mjs.
 */
class KeysJsInteropIT {
  private static final HexFormat HEX = HexFormat.of();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(60);

  @Test
  void jsKeys_shouldDecodeSignAndVerifyIdentically() throws Exception {
    final JsonNode values = JSON.readTree(
        NodeJs.run("formats", "crypto-values.mjs", NODE_TIMEOUT).stdout());
    int signatures = 0;
    for (final JsonNode js : values.get("keys")) {
      final PrivateKey key = Keys.unmarshalPrivateKey(HEX.parseHex(js.get("privateProtobuf")
          .asText()));
      final String label = js.get("type").asText() + " " + js.get("peerId").asText();
      assertThat(key.marshal()).as(label).isEqualTo(HEX.parseHex(js.get("privateProtobuf")
          .asText()));
      assertThat(key.publicKey().marshal()).as(label).isEqualTo(
          HEX.parseHex(js.get("publicProtobuf").asText()));
      assertThat(key.publicKey().peerId().toBase58()).as(label).isEqualTo(
          js.get("peerId").asText());
      assertThat(key.publicKey().peerId().toCid().toString(Multibase.Base.BASE32)).as(label)
          .isEqualTo(js.get("peerIdCid").asText());
      for (final JsonNode item : js.get("signatures")) {
        final byte[] message = HEX.parseHex(item.get("message").asText());
        final byte[] jsSignature = HEX.parseHex(item.get("signature").asText());
        // Both signature schemes are deterministic, so equal bytes prove equal rules.
        assertThat(key.sign(message)).as(label).isEqualTo(jsSignature);
        assertThat(key.publicKey().verify(message, jsSignature)).as(label).isTrue();
        signatures++;
      }
    }
    assertThat(signatures).isGreaterThanOrEqualTo(30);
  }

  @Test
  void javaSignatures_shouldVerifyInJs_andJsShouldDeriveTheSamePeerIds(@TempDir final Path dir)
      throws Exception {
    final SecureRandom random = new SecureRandom();
    final ArrayNode items = JSON.createArrayNode();
    final List<Boolean> expected = new ArrayList<>();
    final List<String> peerIds = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      final PrivateKey key = Keys.generate(i % 2 == 0 ? KeyType.ED25519 : KeyType.SECP256K1,
          random);
      final byte[] message = ("java message " + i).getBytes(StandardCharsets.UTF_8);
      byte[] signature = key.sign(message);
      final boolean valid = i % 5 != 4;
      if (!valid) {
        signature = signature.clone();
        signature[signature.length / 2] ^= 0x10;
      }
      final ObjectNode item = items.addObject();
      item.put("publicProtobuf", HEX.formatHex(key.publicKey().marshal()));
      item.put("privateProtobuf", HEX.formatHex(key.marshal()));
      item.put("message", HEX.formatHex(message));
      item.put("signature", HEX.formatHex(signature));
      expected.add(valid);
      peerIds.add(key.publicKey().peerId().toBase58());
    }
    final Path input = dir.resolve("java-signatures.json");
    Files.writeString(input, JSON.createObjectNode().set("items", items).toString());

    final JsonNode results = JSON.readTree(NodeJs.run("formats", "crypto-values.mjs",
        NODE_TIMEOUT, "verify", input.toString()).stdout()).get("results");
    assertThat(results).hasSize(expected.size());
    for (int i = 0; i < expected.size(); i++) {
      assertThat(results.get(i).get("ok").asBoolean()).as("item " + i).isEqualTo(expected.get(i));
      assertThat(results.get(i).get("peerId").asText()).as("item " + i).isEqualTo(peerIds.get(i));
    }
  }
}
