package io.relaypinner.ipfs.dagcbor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.testkit.NodeJs;
import java.io.IOException;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Byte-for-byte agreement with {@code @ipld/dag-cbor} 9 (the codec OrbitDB 4 uses), through
 * interop/js/common/dagcbor-samples.mjs run in stack B.
 */
class DagCborJsInteropIT {
  private static final HexFormat HEX = HexFormat.of();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(60);
  private static final String SCRIPT = "../common/dagcbor-samples.mjs";

  @Test
  void jsSamples_shouldDecodeStrictlyAndReencodeToTheSameBytes() throws IOException {
    final Map<String, byte[]> samples = new LinkedHashMap<>();
    for (final JsonNode line : lines(NodeJs.run("stack-b", SCRIPT, NODE_TIMEOUT, "samples")
        .stdout())) {
      final byte[] bytes = HEX.parseHex(line.get("hex").asText());
      final String name = line.get("name").asText();
      final DagCborValue value = DagCbor.decode(bytes);
      assertThat(DagCbor.encode(value)).as(name).isEqualTo(bytes);
      assertThat(DagCbor.cid(bytes)).as(name).isEqualTo(Cid.parse(line.get("cid").asText()));
      samples.put(name, bytes);
    }
    assertThat(samples).containsKeys("orbitdb-entry", "links-and-bytes", "integers", "floats");

    final DagCborValue.Map entry = DagCbor.decode(samples.get("orbitdb-entry")).asMap();
    assertThat(entry.entries().keySet()).containsExactly(
        "v", "id", "key", "sig", "next", "refs", "clock", "payload", "identity");
    assertThat(entry.get("clock").asMap().get("time").asLong()).isEqualTo(17);
    assertThat(entry.get("payload").asMap().get("value").asMap().get("ratio").asDouble())
        .isEqualTo(0.5);

    final DagCborValue.Map links = DagCbor.decode(samples.get("links-and-bytes")).asMap();
    assertThat(DagCbor.links(samples.get("links-and-bytes"))).hasSize(5)
        .contains(links.get("link").asLink(), links.get("v0").asLink());

    final List<DagCborValue> ints = DagCbor.decode(samples.get("integers")).asList().items();
    assertThat(ints.get(20).asBigInteger()).isEqualTo(BigInteger.ONE.shiftLeft(64)
        .subtract(BigInteger.ONE));
    assertThat(ints.get(21).asBigInteger()).isEqualTo(BigInteger.ONE.shiftLeft(64).negate());
    assertThat(ints.get(23).asLong()).isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void javaEncodings_shouldRoundTripThroughJsUnchanged() throws IOException {
    final LinkedHashMap<String, DagCborValue> entries = new LinkedHashMap<>();
    entries.put("sig", DagCborValue.of("30450221"));
    entries.put("v", DagCborValue.of(2));
    entries.put("payload", DagCborValue.map(Map.of("op", DagCborValue.of("ADD"),
        "value", DagCborValue.of(new byte[] {1, 2, 3}))));
    entries.put("é", DagCborValue.of(1.5));
    entries.put("水", DagCborValue.of(-1e-300));
    entries.put("big", DagCborValue.integer(new BigInteger("18446744073709551615")));
    entries.put("link", DagCborValue.of(
        Cid.parse("bafyreidykglsfhoixmivffc5uwhcgshx4j465xwqntbmu43nb2dzqwfvae")));
    entries.put("v0", DagCborValue.of(Cid.parse("QmXg9Pp2ytZ14xgmQjYEiHjVjMFXzCVVEcRTWJBmLgR39V")));
    entries.put("list", DagCborValue.list(DagCborValue.nullValue(), DagCborValue.of(true),
        DagCborValue.of(Long.MIN_VALUE), DagCborValue.of("x".repeat(5000))));
    final List<byte[]> blocks = List.of(
        DagCbor.encode(DagCborValue.map(entries)),
        DagCbor.encode(DagCborValue.list()),
        DagCbor.encode(DagCborValue.of(0.1)));
    final List<String> args = new ArrayList<>();
    args.add("roundtrip");
    blocks.forEach(b -> args.add(HEX.formatHex(b)));
    final List<JsonNode> results = lines(NodeJs.run("stack-b", SCRIPT, NODE_TIMEOUT,
        args.toArray(String[]::new)).stdout());
    assertThat(results).hasSize(blocks.size());
    for (int i = 0; i < blocks.size(); i++) {
      assertThat(results.get(i).path("error").asText()).isEmpty();
      assertThat(results.get(i).get("hex").asText()).isEqualTo(HEX.formatHex(blocks.get(i)));
      assertThat(Cid.parse(results.get(i).get("cid").asText()))
          .isEqualTo(DagCbor.cid(blocks.get(i)));
    }
  }

  private static List<JsonNode> lines(final String stdout) throws IOException {
    final List<JsonNode> out = new ArrayList<>();
    for (final String line : stdout.split("\n")) {
      if (!line.isBlank()) {
        out.add(JSON.readTree(line));
      }
    }
    return out;
  }
}
