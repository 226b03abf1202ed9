package io.relaypinner.handoff.records;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;

/**
 * One Aleph message envelope (the shape {@code POST /api/v0/messages} takes and the posts API
 * returns): {@code sender}, {@code chain}, {@code type}, {@code item_type: "inline"},
 * {@code item_content} (the content as a JSON string), {@code item_hash} (lowercase hex SHA-256 of
 * the UTF-8 bytes of {@code item_content}), {@code time} (float seconds), {@code channel} (may be
 * null) and {@code signature} (EIP-191 {@code personal_sign} of {@link #signedText()}, 65 bytes as
 * {@code 0x} hex). A value of this type is only a shape: {@link MessageVerifier} checks it.
 */
public record AlephMessage(String sender, String chain, MessageType type, String itemType,
    String itemContent, String itemHash, double time, String channel, String signature) {
  /** The only chain this project signs for. */
  public static final String CHAIN_ETH = "ETH";
  /** The only item type the record service stores. */
  public static final String ITEM_TYPE_INLINE = "inline";

  public AlephMessage {
    Objects.requireNonNull(sender, "sender");
    Objects.requireNonNull(chain, "chain");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(itemType, "itemType");
    Objects.requireNonNull(itemContent, "itemContent");
    Objects.requireNonNull(itemHash, "itemHash");
  }

  /**
   * The text the signature covers: {@code chain + "\n" + sender + "\n" + type + "\n" + item_hash}
   * (pyaleph's {@code get_verification_buffer}), signed as UTF-8 with the EIP-191 prefix.
   */
  public String signedText() {
    return signedText(chain, sender, type.name(), itemHash);
  }

  /** {@link #signedText()} from its parts. */
  public static String signedText(
      final String chain, final String sender, final String type, final String itemHash) {
    return chain + "\n" + sender + "\n" + type + "\n" + itemHash;
  }

  /** Lowercase hex SHA-256 of the UTF-8 bytes of {@code itemContent}. */
  public static String itemHashOf(final String itemContent) {
    try {
      final MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(sha256.digest(itemContent.getBytes(StandardCharsets.UTF_8)));
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }

  /** The envelope as a JSON object, in the member order Aleph's SDKs use. */
  public ObjectNode toJson() {
    final ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("sender", sender);
    node.put("chain", chain);
    node.put("type", type.name());
    node.put("item_type", itemType);
    node.put("item_content", itemContent);
    node.put("item_hash", itemHash);
    node.set("time", RecordJson.number(time));
    if (channel == null) {
      node.putNull("channel");
    } else {
      node.put("channel", channel);
    }
    if (signature != null) {
      node.put("signature", signature);
    }
    return node;
  }

  /**
   * Reads an envelope. Only shapes are checked here (present, right JSON types, a known type).
   *
   * @throws RecordRejectedException 422 naming the first bad field
   */
  public static AlephMessage fromJson(final JsonNode node) {
    if (node == null || !node.isObject()) {
      throw RecordRejectedException.invalid(
          ErrorCodes.INVALID_MESSAGE, "message must be a JSON object");
    }
    final String sender = required(node, "sender");
    final String chain = required(node, "chain");
    final String typeName = required(node, "type");
    final MessageType type;
    try {
      type = MessageType.valueOf(typeName.toUpperCase(Locale.ROOT));
    } catch (final IllegalArgumentException e) {
      throw RecordRejectedException.invalid(ErrorCodes.UNSUPPORTED_TYPE,
          "message type " + abbreviate(typeName) + " is not supported (AGGREGATE, POST, FORGET)");
    }
    if (!type.name().equals(typeName)) {
      throw RecordRejectedException.invalid(ErrorCodes.INVALID_MESSAGE,
          "message type must be upper case: " + type.name());
    }
    final JsonNode itemTypeNode = node.get("item_type");
    final String itemType;
    if (itemTypeNode == null || itemTypeNode.isNull()) {
      itemType = ITEM_TYPE_INLINE;
    } else if (itemTypeNode.isTextual()) {
      itemType = itemTypeNode.textValue();
    } else {
      throw RecordRejectedException.invalid(
          ErrorCodes.INVALID_MESSAGE, "item_type must be a string");
    }
    final String itemContent = required(node, "item_content");
    final String itemHash = required(node, "item_hash");
    final JsonNode timeNode = node.get("time");
    if (timeNode == null || !timeNode.isNumber()) {
      throw RecordRejectedException.invalid(ErrorCodes.INVALID_MESSAGE, "time must be a number");
    }
    final JsonNode channelNode = node.get("channel");
    final String channel;
    if (channelNode == null || channelNode.isNull()) {
      channel = null;
    } else if (channelNode.isTextual()) {
      channel = channelNode.textValue();
    } else {
      throw RecordRejectedException.invalid(
          ErrorCodes.INVALID_MESSAGE, "channel must be a string or null");
    }
    final JsonNode signatureNode = node.get("signature");
    if (signatureNode == null || signatureNode.isNull()) {
      throw RecordRejectedException.invalid(
          ErrorCodes.INVALID_SIGNATURE, "message is unsigned (no signature)");
    }
    if (!signatureNode.isTextual()) {
      throw RecordRejectedException.invalid(
          ErrorCodes.INVALID_SIGNATURE, "signature must be a string");
    }
    return new AlephMessage(sender, chain, type, itemType, itemContent, itemHash,
        timeNode.doubleValue(), channel, signatureNode.textValue());
  }

  private static String required(final JsonNode node, final String field) {
    final String value = RecordJson.text(node, field);
    if (value == null) {
      throw RecordRejectedException.invalid(
          ErrorCodes.INVALID_MESSAGE, field + " must be a string");
    }
    return value;
  }

  static String abbreviate(final String text) {
    final String quoted = text.length() > 40 ? text.substring(0, 40) + "…" : text;
    return "\"" + quoted + "\"";
  }
}
