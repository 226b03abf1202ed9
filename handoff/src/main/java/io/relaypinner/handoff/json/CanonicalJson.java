package io.relaypinner.handoff.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * RFC 8785 JSON Canonicalization Scheme (JCS) on Jackson's tree model: no whitespace, object
 * members sorted by their names as UTF-16 code units, strings with the minimal escaping of RFC
 * 8785 section 3.2.2.2 (only {@code "}, {@code \}, and control characters below U+0020; the five
 * with short forms use them, the rest {@code \}{@code u00xx} in lowercase hex), numbers as IEEE
 * doubles written by ECMAScript's rules ({@link EcmaNumbers}). Lone surrogates, NaN and the
 * infinities are rejected, as the RFC requires.
 *
 * <p>Used for every payload that is signed inside a record's content (owner authorizations,
 * acknowledgement proofs) and for the {@code item_content} this project writes, so a signer and a
 * verifier always agree on the bytes.
 */
public final class CanonicalJson {
  /** Deepest nesting {@link #parse} accepts. */
  public static final int MAX_NESTING_DEPTH = 64;

  private static final ObjectMapper STRICT = JsonMapper.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .build();

  static {
    STRICT.getFactory().setStreamReadConstraints(
        StreamReadConstraints.builder().maxNestingDepth(MAX_NESTING_DEPTH).build());
  }

  private CanonicalJson() {}

  /**
   * Parses JSON text strictly: one value, no duplicate member names, nesting at most {@value
   * #MAX_NESTING_DEPTH} deep.
   *
   * @throws JsonProcessingException when the text is not such JSON
   */
  public static JsonNode parse(final String json) throws JsonProcessingException {
    final JsonNode node = STRICT.readTree(json);
    if (node == null || node.isMissingNode()) {
      throw new JsonParseFailure("empty JSON text");
    }
    return node;
  }

  /**
   * {@link #parse(String)} for UTF-8 bytes; bytes that are not valid UTF-8 are rejected.
   *
   * @throws JsonProcessingException when the bytes are not such JSON
   */
  public static JsonNode parse(final byte[] json) throws JsonProcessingException {
    final JsonNode node;
    try {
      node = STRICT.readTree(json);
    } catch (final JsonProcessingException e) {
      throw e;
    } catch (final IOException e) {
      throw new JsonParseFailure("unreadable JSON: " + e.getMessage());
    }
    if (node == null || node.isMissingNode()) {
      throw new JsonParseFailure("empty JSON text");
    }
    return node;
  }

  /** The canonical text of {@code node}. */
  public static String write(final JsonNode node) {
    final StringBuilder out = new StringBuilder();
    write(node, out);
    return out.toString();
  }

  /** The canonical UTF-8 bytes of {@code node} (what gets hashed or signed). */
  public static byte[] writeBytes(final JsonNode node) {
    return write(node).getBytes(StandardCharsets.UTF_8);
  }

  /** Parses {@code json} strictly and returns its canonical text. */
  public static String canonicalize(final String json) throws JsonProcessingException {
    return write(parse(json));
  }

  private static void write(final JsonNode node, final StringBuilder out) {
    switch (node.getNodeType()) {
      case OBJECT -> {
        final List<Map.Entry<String, JsonNode>> members = new ArrayList<>(node.properties());
        // String.compareTo compares UTF-16 code units, exactly RFC 8785 section 3.2.3.
        members.sort(Map.Entry.comparingByKey());
        out.append('{');
        boolean first = true;
        for (final Map.Entry<String, JsonNode> member : members) {
          if (!first) {
            out.append(',');
          }
          first = false;
          writeString(member.getKey(), out);
          out.append(':');
          write(member.getValue(), out);
        }
        out.append('}');
      }
      case ARRAY -> {
        out.append('[');
        for (int i = 0; i < node.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          write(node.get(i), out);
        }
        out.append(']');
      }
      case STRING -> writeString(node.textValue(), out);
      case NUMBER -> out.append(EcmaNumbers.toString(node.doubleValue()));
      case BOOLEAN -> out.append(node.booleanValue() ? "true" : "false");
      case NULL -> out.append("null");
      default -> throw new IllegalArgumentException(
          "JSON canonicalization has no form for " + node.getNodeType());
    }
  }

  private static void writeString(final String value, final StringBuilder out) {
    out.append('"');
    for (int i = 0; i < value.length(); i++) {
      final char c = value.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 >= value.length() || !Character.isLowSurrogate(value.charAt(i + 1))) {
          throw new IllegalArgumentException("string holds a lone surrogate at index " + i);
        }
        out.append(c).append(value.charAt(++i));
        continue;
      }
      if (Character.isLowSurrogate(c)) {
        throw new IllegalArgumentException("string holds a lone surrogate at index " + i);
      }
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append("\\u00").append(Character.forDigit(c >> 4, 16))
                .append(Character.forDigit(c & 0xf, 16));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /** Thrown by {@link #parse} for text that holds no JSON value at all. */
  static final class JsonParseFailure extends JsonProcessingException {
    private static final long serialVersionUID = 1L;

    JsonParseFailure(final String message) {
      super(message);
    }
  }
}
