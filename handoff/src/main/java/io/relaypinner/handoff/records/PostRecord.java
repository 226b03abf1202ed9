package io.relaypinner.handoff.records;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One post as {@code GET /api/v0/posts.json} lists it (pyaleph's v0 shape): the envelope of the
 * message that made it ({@code chain}, {@code sender}, {@code item_hash}, {@code item_content},
 * {@code signature}, {@code time}, {@code channel}), the post {@code type} and {@code ref}, the
 * owner {@code address}, and {@code content}, which is the post's own content (the
 * {@code content} member of {@code item_content}), not the whole item content.
 */
public record PostRecord(String itemHash, String chain, String sender, String address,
    String type, String ref, String channel, double time, JsonNode content, String itemContent,
    String signature) {
  public PostRecord {
    Objects.requireNonNull(itemHash, "itemHash");
    Objects.requireNonNull(content, "content");
  }

  /** The record of a verified POST message. */
  public static PostRecord of(final AlephMessage message, final RecordContent.Post post) {
    return new PostRecord(message.itemHash(), message.chain(), message.sender(), post.address(),
        post.type(), post.ref(), message.channel(), message.time(), post.content(),
        message.itemContent(), message.signature());
  }

  /**
   * The message this post came from, to check with {@link MessageVerifier} (who really signed
   * it), e.g. {@code verifier.verify(record.toMessage()).sender()}.
   */
  public AlephMessage toMessage() {
    return new AlephMessage(sender, chain, MessageType.POST, AlephMessage.ITEM_TYPE_INLINE,
        itemContent, itemHash, time, channel, signature);
  }

  /** The v0 JSON shape. */
  public ObjectNode toJson() {
    final ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("chain", chain);
    node.put("item_hash", itemHash);
    node.put("sender", sender);
    node.put("type", type);
    node.put("channel", channel);
    node.put("confirmed", false);
    node.set("content", content);
    node.put("item_content", itemContent);
    node.put("item_type", AlephMessage.ITEM_TYPE_INLINE);
    node.put("signature", signature);
    node.put("size", itemContent.getBytes(StandardCharsets.UTF_8).length);
    node.set("time", RecordJson.number(time));
    node.putArray("confirmations");
    node.put("original_item_hash", itemHash);
    node.put("original_signature", signature);
    node.put("original_type", type);
    node.put("hash", itemHash);
    node.put("address", address);
    node.put("ref", ref);
    return node;
  }

  /**
   * Reads the v0 JSON shape (what public Aleph and the record service return).
   *
   * @throws RecordStoreException when required members are missing
   */
  public static PostRecord fromJson(final JsonNode node) {
    final String itemHash = RecordJson.text(node, "item_hash");
    final JsonNode content = node.get("content");
    final String itemContent = RecordJson.text(node, "item_content");
    if (itemHash == null || content == null || itemContent == null) {
      throw new RecordStoreException(
          "a post in the response lacks item_hash, content or item_content");
    }
    final JsonNode time = node.get("time");
    final String sender = RecordJson.text(node, "sender");
    final String address = RecordJson.text(node, "address");
    return new PostRecord(itemHash, RecordJson.text(node, "chain"), sender,
        address != null ? address : sender, RecordJson.text(node, "type"),
        RecordJson.text(node, "ref"), RecordJson.text(node, "channel"),
        time != null && time.isNumber() ? time.doubleValue() : 0, content, itemContent,
        RecordJson.text(node, "signature"));
  }
}
