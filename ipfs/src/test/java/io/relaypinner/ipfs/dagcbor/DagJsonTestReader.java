package io.relaypinner.ipfs.dagcbor;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.relaypinner.multiformats.Cid;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A small DAG-JSON reader for tests ({@code ipld/ipld} {@code specs/codecs/dag-json/spec.md}):
 * {@code {"/": "<cid>"}} is a link, {@code {"/": {"bytes": "<base64, no padding>"}}} is bytes,
 * numbers without fraction or exponent are integers, others floats. Duplicate keys are refused.
 */
final class DagJsonTestReader {
  private static final ObjectMapper MAPPER = JsonMapper.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .disable(JsonParser.Feature.ALLOW_COMMENTS)
      .build();

  private DagJsonTestReader() {}

  static DagCborValue read(final byte[] json) {
    try {
      return convert(MAPPER.readTree(json));
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static DagCborValue convert(final JsonNode node) {
    if (node.isNull()) {
      return DagCborValue.nullValue();
    }
    if (node.isBoolean()) {
      return DagCborValue.of(node.booleanValue());
    }
    if (node.isIntegralNumber()) {
      return DagCborValue.integer(node.bigIntegerValue());
    }
    if (node.isFloatingPointNumber()) {
      return DagCborValue.of(node.doubleValue());
    }
    if (node.isTextual()) {
      return DagCborValue.of(node.textValue());
    }
    if (node.isArray()) {
      final ArrayList<DagCborValue> items = new ArrayList<>(node.size());
      for (final JsonNode item : node) {
        items.add(convert(item));
      }
      return DagCborValue.list(items);
    }
    if (node.isObject()) {
      final JsonNode slash = node.get("/");
      if (slash != null && node.size() == 1) {
        if (slash.isTextual()) {
          return DagCborValue.of(Cid.parse(slash.textValue()));
        }
        final JsonNode bytes = slash.get("bytes");
        if (slash.isObject() && slash.size() == 1 && bytes != null && bytes.isTextual()) {
          return DagCborValue.of(Base64.getDecoder().decode(bytes.textValue()));
        }
      }
      final Map<String, DagCborValue> entries = new LinkedHashMap<>();
      for (final Map.Entry<String, JsonNode> field : node.properties()) {
        entries.put(field.getKey(), convert(field.getValue()));
      }
      return DagCborValue.map(entries);
    }
    throw new IllegalArgumentException("unexpected JSON node " + node.getNodeType());
  }
}
