package io.relaypinner.handoff.records;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.json.CanonicalJson;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * Builds and signs Aleph messages for one key in one call each: the content (with this key's
 * address as owner and the clock's time in float seconds), its {@code item_content} as RFC 8785
 * canonical JSON, {@code item_hash}, and the EIP-191 signature. Publish the result with a
 * {@link RecordStore}.
 *
 * <pre>{@code
 * RecordSigner owner = new RecordSigner(ownerKey, Clock.systemUTC());
 * store.publish(owner.aggregate("vm-bootstrap-config", entries, "ALEPH-CLOUDSOLUTIONS"));
 * store.publish(owner.deleteAggregateEntries("vm-bootstrap-config", List.of(token), channel));
 * store.publish(guest.post("vm-bootstrap-config-status", "vm-bootstrap-config", ack, channel));
 * store.publish(owner.forget(List.of(itemHash), List.of(), "failed attempt", channel));
 * }</pre>
 */
public final class RecordSigner {
  private final EthPrivateKey key;
  private final Clock clock;

  public RecordSigner(final EthPrivateKey key, final Clock clock) {
    this.key = Objects.requireNonNull(key, "key");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** The signing (sender and owner) address. */
  public EthAddress address() {
    return key.address();
  }

  /** An AGGREGATE merging {@code entries} into this owner's aggregate {@code key}. */
  public AlephMessage aggregate(final String aggregateKey, final ObjectNode entries,
      final String channel) {
    return sign(MessageType.AGGREGATE, new RecordContent.Aggregate(
        address().toString(), aggregateKey, entries.deepCopy(), now()), channel);
  }

  /**
   * An AGGREGATE that deletes {@code entryNames} from this owner's aggregate {@code key}: each
   * entry is set to {@code null}, which the record service treats as removal (and an Aleph reader
   * sees as a null entry, i.e. absent).
   */
  public AlephMessage deleteAggregateEntries(final String aggregateKey,
      final Collection<String> entryNames, final String channel) {
    final ObjectNode entries = JsonNodeFactory.instance.objectNode();
    entryNames.forEach(entries::putNull);
    return aggregate(aggregateKey, entries, channel);
  }

  /** A POST of {@code postType} with an optional {@code ref}. */
  public AlephMessage post(final String postType, final String ref, final JsonNode content,
      final String channel) {
    return sign(MessageType.POST, new RecordContent.Post(
        address().toString(), postType, ref, content.deepCopy(), now()), channel);
  }

  /** A FORGET of this sender's messages {@code hashes} and aggregate keys {@code aggregateKeys}. */
  public AlephMessage forget(final Collection<String> hashes,
      final Collection<String> aggregateKeys, final String reason, final String channel) {
    return sign(MessageType.FORGET, new RecordContent.Forget(address().toString(),
        List.copyOf(hashes), List.copyOf(aggregateKeys), reason, now()), channel);
  }

  /** Signs {@code content} as a message of {@code type}; the message time is the content's. */
  public AlephMessage sign(final MessageType type, final RecordContent content,
      final String channel) {
    final String itemContent = CanonicalJson.write(content.toJson());
    final String itemHash = AlephMessage.itemHashOf(itemContent);
    final String sender = address().toString();
    final String signature = key.signPersonal(
        AlephMessage.signedText(AlephMessage.CHAIN_ETH, sender, type.name(), itemHash)).toHex();
    return new AlephMessage(sender, AlephMessage.CHAIN_ETH, type, AlephMessage.ITEM_TYPE_INLINE,
        itemContent, itemHash, content.time(), channel, signature);
  }

  /** A signed payload of this key (see {@link SignedPayload}). */
  public SignedPayload signPayload(final JsonNode payload) {
    return SignedPayload.sign(key, payload);
  }

  private double now() {
    return clock.millis() / 1000.0;
  }
}
