package io.relaypinner.handoff.records;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.WalletFormatException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The parsed {@code item_content} of a message, one shape per {@link MessageType}. Every content
 * has the owner {@code address} (which must be the message's sender) and a {@code time} in
 * seconds (any non-negative number: one public guest writes milliseconds here).
 */
public sealed interface RecordContent {
  /** Longest aggregate key, post type or ref. */
  int MAX_NAME_LENGTH = 256;
  /** Most hashes or aggregate keys one FORGET may name. */
  int MAX_FORGET_TARGETS = 1000;
  /** Aleph item hashes: 64 lowercase hex digits. */
  Pattern ITEM_HASH = Pattern.compile("[0-9a-f]{64}");

  /** The owner address as written in the content. */
  String address();

  /** The content's own time. */
  double time();

  /** The content as the JSON object that becomes {@code item_content}. */
  ObjectNode toJson();

  /**
   * AGGREGATE: {@code {address, key, content: {entry: value…}, time}}. The entries are merged
   * into the owner's aggregate under {@code key}, entry by entry; an entry whose value is
   * {@code null} removes that entry (this project's delete form).
   */
  record Aggregate(String address, String key, ObjectNode content, double time)
      implements RecordContent {
    public Aggregate {
      Objects.requireNonNull(address, "address");
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(content, "content");
    }

    @Override
    public ObjectNode toJson() {
      final ObjectNode node = JsonNodeFactory.instance.objectNode();
      node.put("address", address);
      node.put("key", key);
      node.set("content", content);
      node.set("time", RecordJson.number(time));
      return node;
    }
  }

  /** POST: {@code {address, type, ref, content, time}}; {@code ref} may be null. */
  record Post(String address, String type, String ref, JsonNode content, double time)
      implements RecordContent {
    public Post {
      Objects.requireNonNull(address, "address");
      Objects.requireNonNull(type, "type");
      Objects.requireNonNull(content, "content");
    }

    @Override
    public ObjectNode toJson() {
      final ObjectNode node = JsonNodeFactory.instance.objectNode();
      node.put("address", address);
      node.put("type", type);
      if (ref != null) {
        node.put("ref", ref);
      }
      node.set("content", content);
      node.set("time", RecordJson.number(time));
      return node;
    }
  }

  /**
   * FORGET: {@code {address, hashes: [item_hash…], aggregates: [key…], reason, time}}.
   * Removes the named messages and every AGGREGATE message of the sender under the named keys;
   * only messages of the sender itself.
   */
  record Forget(String address, List<String> hashes, List<String> aggregates, String reason,
      double time) implements RecordContent {
    public Forget {
      Objects.requireNonNull(address, "address");
      hashes = List.copyOf(hashes);
      aggregates = List.copyOf(aggregates);
    }

    @Override
    public ObjectNode toJson() {
      final ObjectNode node = JsonNodeFactory.instance.objectNode();
      node.put("address", address);
      final ArrayNode hashArray = node.putArray("hashes");
      hashes.forEach(hashArray::add);
      final ArrayNode aggregateArray = node.putArray("aggregates");
      aggregates.forEach(aggregateArray::add);
      if (reason != null) {
        node.put("reason", reason);
      }
      node.set("time", RecordJson.number(time));
      return node;
    }
  }

  /**
   * Reads the content of a message of {@code type}.
   *
   * @throws RecordRejectedException 422 {@code invalid_message} naming the bad field
   */
  static RecordContent parse(final MessageType type, final JsonNode node) {
    if (node == null || !node.isObject()) {
      throw invalid("item_content must be a JSON object");
    }
    final String address = RecordJson.text(node, "address");
    if (address == null) {
      throw invalid("content.address must be a string");
    }
    try {
      EthAddress.parse(address);
    } catch (final WalletFormatException e) {
      throw invalid("content.address: " + e.getMessage());
    }
    final JsonNode timeNode = node.get("time");
    if (timeNode == null || !timeNode.isNumber() || !Double.isFinite(timeNode.doubleValue())
        || timeNode.doubleValue() < 0) {
      throw invalid("content.time must be a non-negative number");
    }
    final double time = timeNode.doubleValue();
    return switch (type) {
      case AGGREGATE -> {
        final String key = name(node, "key", true);
        final JsonNode content = node.get("content");
        if (content == null || !content.isObject()) {
          throw invalid("content.content of an AGGREGATE must be a JSON object");
        }
        yield new Aggregate(address, key, (ObjectNode) content, time);
      }
      case POST -> {
        final String postType = name(node, "type", true);
        final String ref = name(node, "ref", false);
        final JsonNode content = node.get("content");
        if (content == null) {
          throw invalid("content.content of a POST is missing");
        }
        yield new Post(address, postType, ref, content, time);
      }
      case FORGET -> {
        final List<String> hashes = strings(node, "hashes");
        for (final String hash : hashes) {
          if (!ITEM_HASH.matcher(hash).matches()) {
            throw invalid("content.hashes: " + AlephMessage.abbreviate(hash)
                + " is not an item hash (64 lowercase hex digits)");
          }
        }
        final List<String> aggregates = strings(node, "aggregates");
        if (hashes.isEmpty() && aggregates.isEmpty()) {
          throw invalid("a FORGET must name at least one hash or aggregate key");
        }
        final JsonNode reasonNode = node.get("reason");
        if (reasonNode != null && !reasonNode.isNull() && !reasonNode.isTextual()) {
          throw invalid("content.reason must be a string");
        }
        final String reason = reasonNode == null || reasonNode.isNull() ? null
            : reasonNode.textValue();
        yield new Forget(address, hashes, aggregates, reason, time);
      }
    };
  }

  private static String name(final JsonNode node, final String field, final boolean required) {
    final JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      if (required) {
        throw invalid("content." + field + " must be a string");
      }
      return null;
    }
    if (!value.isTextual() || value.textValue().isEmpty()
        || value.textValue().length() > MAX_NAME_LENGTH) {
      throw invalid("content." + field + " must be a string of 1 to " + MAX_NAME_LENGTH
          + " characters");
    }
    return value.textValue();
  }

  private static List<String> strings(final JsonNode node, final String field) {
    final JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return List.of();
    }
    if (!value.isArray() || value.size() > MAX_FORGET_TARGETS) {
      throw invalid("content." + field + " must be an array of at most " + MAX_FORGET_TARGETS
          + " strings");
    }
    final List<String> out = new ArrayList<>(value.size());
    for (final JsonNode element : value) {
      if (!element.isTextual()) {
        throw invalid("content." + field + " must hold only strings");
      }
      out.add(element.textValue());
    }
    return out;
  }

  private static RecordRejectedException invalid(final String message) {
    return RecordRejectedException.invalid(ErrorCodes.INVALID_MESSAGE, message);
  }
}
