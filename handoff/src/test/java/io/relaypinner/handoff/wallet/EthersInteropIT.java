package io.relaypinner.handoff.wallet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.json.CanonicalJson;
import io.relaypinner.handoff.json.EcmaNumbers;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.TickingClock;
import io.relaypinner.testkit.NodeJs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Java's Ethereum keys, EIP-191 signatures, address recovery and JSON number/string forms against
 * ethers 6 (npm project {@code interop/js/handoff}, script {@code eth-values.mjs}), both ways:
 * ethers signs and Java must produce the same bytes and recover ethers' signatures; Java signs
 * and ethers must recover Java's. Keys: fixed vectors plus fresh random ones each run.
 */
class EthersInteropIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HexFormat HEX = HexFormat.of();

  private static final List<EthPrivateKey> KEYS = new ArrayList<>();
  private static final List<String> MESSAGES = new ArrayList<>();
  private static final List<byte[]> BYTE_MESSAGES = new ArrayList<>();
  private static final List<Double> NUMBERS = new ArrayList<>();
  private static final List<String> STRINGS = new ArrayList<>();
  private static final List<EthAddress> ADDRESSES = new ArrayList<>();
  private static final List<Object[]> JAVA_SIGNATURES = new ArrayList<>();
  private static JsonNode ethers;

  @TempDir
  static Path dir;

  @BeforeAll
  static void runEthers() throws Exception {
    final SecureRandom random = new SecureRandom();
    KEYS.add(EthPrivateKey.parse(
        "0x0123456789012345678901234567890123456789012345678901234567890123"));
    KEYS.add(EthPrivateKey.parse(
        "0x0000000000000000000000000000000000000000000000000000000000000001"));
    KEYS.add(EthPrivateKey.parse(
        "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140"));
    for (int i = 0; i < 6; i++) {
      KEYS.add(EthPrivateKey.generate(random));
    }
    final AlephMessage aleph = new RecordSigner(KEYS.get(0), new TickingClock(1_784_808_000_123L))
        .post("vm-bootstrap-config-status", "vm-bootstrap-config",
            JsonNodeFactory.instance.objectNode().put("status", "applied"), "simple-todo");
    MESSAGES.addAll(List.of("hello", "", "héllo wörld 🌍 ünïcödé", "line1\nline2\r\n\t",
        "\u0000\u0001 control", "x".repeat(5000), aleph.signedText(),
        CanonicalJson.write(JsonNodeFactory.instance.objectNode().put("ownerAddress",
            KEYS.get(1).address().toString()).put("issuedAt", 1784808300000L))));
    BYTE_MESSAGES.add(new byte[0]);
    BYTE_MESSAGES.add(new byte[] {0, (byte) 0xff, 0x19, 0x45});
    final byte[] digestLike = new byte[32];
    random.nextBytes(digestLike);
    BYTE_MESSAGES.add(digestLike);

    final Random numbers = new Random(random.nextLong());
    for (final long bits : new long[] {0L, 0x8000000000000000L, 1L, 0x7fefffffffffffffL,
        0x4340000000000000L, 0x44b52d02c7e14af6L, 0x3eb0c6f7a0b5ed8dL}) {
      NUMBERS.add(Double.longBitsToDouble(bits));
    }
    while (NUMBERS.size() < 3000) {
      final double value = switch (NUMBERS.size() % 4) {
        case 0 -> Double.longBitsToDouble(numbers.nextLong());
        case 1 -> numbers.nextInt() / 1000.0;
        case 2 -> 1.7e9 + numbers.nextInt(100_000_000) / 1000.0;
        default -> numbers.nextGaussian() * Math.pow(10, numbers.nextInt(40) - 20);
      };
      if (Double.isFinite(value)) {
        NUMBERS.add(value);
      }
    }
    STRINGS.addAll(List.of("", "plain", "\"quoted\" \\ back/slash", "\b\f\n\r\t\u0000\u001f\u007f",
        "\u2028\u2029 é € 😀 \ud83d\ude00", "</script>"));
    for (int i = 0; i < 200; i++) {
      final StringBuilder text = new StringBuilder();
      for (int j = 0; j < 20; j++) {
        final int codePoint = numbers.nextInt(4) == 0 ? numbers.nextInt(0x80)
            : numbers.nextInt(0x10ffff);
        if (codePoint < 0xd800 || codePoint > 0xdfff) {
          text.appendCodePoint(codePoint);
        }
      }
      STRINGS.add(text.toString());
    }
    for (int i = 0; i < 50; i++) {
      ADDRESSES.add(EthPrivateKey.generate(random).address());
    }

    final ObjectNode input = JsonNodeFactory.instance.objectNode();
    final ArrayNode keys = input.putArray("keys");
    KEYS.forEach(key -> keys.add(key.toHex()));
    final ArrayNode messages = input.putArray("messages");
    MESSAGES.forEach(messages::add);
    final ArrayNode byteMessages = input.putArray("byteMessages");
    BYTE_MESSAGES.forEach(bytes -> byteMessages.add("0x" + HEX.formatHex(bytes)));
    final ArrayNode verify = input.putArray("verify");
    for (final EthPrivateKey key : KEYS) {
      for (final String message : MESSAGES) {
        final EthSignature signature = key.signPersonal(message);
        JAVA_SIGNATURES.add(new Object[] {key, signature});
        verify.addObject().put("message", message).put("bytes", false)
            .put("signature", signature.toHex());
      }
      for (final byte[] bytes : BYTE_MESSAGES) {
        final EthSignature signature = key.signPersonal(bytes);
        JAVA_SIGNATURES.add(new Object[] {key, signature});
        verify.addObject().put("message", "0x" + HEX.formatHex(bytes)).put("bytes", true)
            .put("signature", signature.toHex());
      }
    }
    // A signature of one message presented for another: ethers must not recover the signer.
    verify.addObject().put("message", "hello!").put("bytes", false)
        .put("signature", KEYS.get(0).signPersonal("hello").toHex());
    final ArrayNode addresses = input.putArray("addresses");
    ADDRESSES.forEach(address -> addresses.add(address.toLowerHex()));
    final ArrayNode numberBits = input.putArray("numbers");
    NUMBERS.forEach(value -> numberBits.add(
        String.format("%016x", Double.doubleToRawLongBits(value))));
    final ArrayNode strings = input.putArray("strings");
    STRINGS.forEach(strings::add);

    final Path file = dir.resolve("input.json");
    Files.write(file, JSON.writeValueAsBytes(input));
    final NodeJs.Result result = NodeJs.run("handoff", "eth-values.mjs", Duration.ofSeconds(120),
        file.toString());
    ethers = JSON.readTree(result.stdout());
  }

  @Test
  void addressesAndPublicKeys_shouldEqualEthers() {
    final JsonNode keys = ethers.get("keys");
    assertThat(keys).hasSize(KEYS.size());
    for (int i = 0; i < KEYS.size(); i++) {
      assertThat(KEYS.get(i).address().toString()).isEqualTo(keys.get(i).get("address").asText());
      assertThat("0x" + HEX.formatHex(KEYS.get(i).publicKey()))
          .isEqualTo(keys.get(i).get("publicKey").asText());
    }
  }

  @Test
  void ethersSignatures_shouldEqualJavasByteForByte_andRecoverInJava() {
    final Map<String, EthPrivateKey> byHex = new HashMap<>();
    KEYS.forEach(key -> byHex.put(key.toHex(), key));
    final JsonNode signatures = ethers.get("signatures");
    assertThat(signatures).hasSize(KEYS.size() * (MESSAGES.size() + BYTE_MESSAGES.size()));
    for (final JsonNode entry : signatures) {
      final EthPrivateKey key = byHex.get(entry.get("key").asText());
      final boolean bytes = entry.get("bytes").asBoolean();
      final String message = entry.get("message").asText();
      final byte[] messageBytes = bytes ? HEX.parseHex(message.substring(2))
          : message.getBytes(StandardCharsets.UTF_8);
      final EthSignature ethersSignature = EthSignature.parse(entry.get("signature").asText());
      assertThat("0x" + HEX.formatHex(PersonalSign.hash(messageBytes)))
          .isEqualTo(entry.get("hash").asText());
      assertThat(key.signPersonal(messageBytes).toHex()).as("signature of %s", message)
          .isEqualTo(entry.get("signature").asText());
      assertThat(PersonalSign.recover(messageBytes, ethersSignature)).contains(key.address());
    }
  }

  @Test
  void javaSignatures_shouldRecoverInEthers() {
    final JsonNode recovered = ethers.get("recovered");
    assertThat(recovered).hasSize(JAVA_SIGNATURES.size() + 1);
    for (int i = 0; i < JAVA_SIGNATURES.size(); i++) {
      final EthPrivateKey key = (EthPrivateKey) JAVA_SIGNATURES.get(i)[0];
      final EthSignature signature = (EthSignature) JAVA_SIGNATURES.get(i)[1];
      assertThat(recovered.get(i).get("address").asText()).isEqualTo(key.address().toString());
      assertThat(recovered.get(i).get("canonical").asText()).isEqualTo(signature.toHex());
    }
    final JsonNode wrong = recovered.get(JAVA_SIGNATURES.size());
    assertThat(wrong.get("address").asText()).isNotEqualTo(KEYS.get(0).address().toString());
  }

  @Test
  void checksums_shouldEqualEthersGetAddress() {
    final JsonNode checksums = ethers.get("checksums");
    for (int i = 0; i < ADDRESSES.size(); i++) {
      assertThat(ADDRESSES.get(i).toString()).isEqualTo(checksums.get(i).asText());
      assertThat(EthAddress.parse(checksums.get(i).asText())).isEqualTo(ADDRESSES.get(i));
    }
  }

  @Test
  void canonicalNumbersAndStrings_shouldEqualJavaScript() {
    final JsonNode numbers = ethers.get("numbers");
    assertThat(numbers).hasSize(NUMBERS.size());
    for (int i = 0; i < NUMBERS.size(); i++) {
      assertThat(EcmaNumbers.toString(NUMBERS.get(i)))
          .as("bits %016x", Double.doubleToRawLongBits(NUMBERS.get(i)))
          .isEqualTo(numbers.get(i).asText());
    }
    final JsonNode strings = ethers.get("strings");
    for (int i = 0; i < STRINGS.size(); i++) {
      assertThat(CanonicalJson.write(JsonNodeFactory.instance.textNode(STRINGS.get(i))))
          .isEqualTo(strings.get(i).asText());
    }
  }
}
