package io.relaypinner.handoff.records.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.json.CanonicalJson;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.ErrorCodes;
import io.relaypinner.handoff.records.MessageType;
import io.relaypinner.handoff.records.MessageVerifier;
import io.relaypinner.handoff.records.PostPage;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.PublishResult;
import io.relaypinner.handoff.records.RecordContent;
import io.relaypinner.handoff.records.RecordJson;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.RecordStoreException;
import io.relaypinner.handoff.records.VerifiedMessage;
import io.relaypinner.handoff.records.service.RecordStorage.Table;
import io.relaypinner.handoff.records.service.RecordStorage.Write;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.WalletFormatException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The record service's engine: a {@link RecordStore} that verifies every message
 * ({@link MessageVerifier}) and keeps them in a {@link RecordStorage}. Semantics:
 *
 * <ul>
 *   <li>AGGREGATE: the owner's aggregate under {@code key} is the fold of all its AGGREGATE
 *       messages for that key in order of content {@code time} (then item hash); each message
 *       sets its entries, and an entry set to {@code null} is removed. A key whose entries were
 *       all removed reads as an empty object; a key whose messages were all forgotten is gone.
 *   <li>POST: stored as is; {@link #posts} filters, sorts by message time and pages.
 *   <li>FORGET: removes the named messages and the sender's AGGREGATE messages under the named
 *       keys, and keeps a tombstone so the same message cannot be published again (410). A FORGET
 *       naming another sender's message is refused as a whole (403); a FORGET cannot forget a
 *       FORGET (422); unknown hashes are ignored.
 *   <li>Publishing a message that is already stored is a no-op that reports {@code processed}.
 * </ul>
 *
 * <p>Methods are synchronized: one writer at a time, and readers see whole batches. The service
 * calls them from its bounded worker, never from an event loop.
 */
public final class LocalRecordStore implements RecordStore, AutoCloseable {
  private static final char SEP = '\0';

  private final RecordStorage storage;
  private final MessageVerifier verifier;
  private final long maxMessages;

  /**
   * @param maxMessages the most messages (of all types, FORGETs included) kept; more are refused
   *     with 507 {@code store_full}
   */
  public LocalRecordStore(final RecordStorage storage, final MessageVerifier verifier,
      final long maxMessages) {
    this.storage = storage;
    this.verifier = verifier;
    this.maxMessages = maxMessages;
  }

  /** How many messages are stored. */
  public synchronized long messageCount() {
    return storage.size(Table.MESSAGES);
  }

  @Override
  public synchronized PublishResult publish(final AlephMessage message) {
    final VerifiedMessage verified = verifier.verify(message);
    final String hash = message.itemHash();
    if (storage.get(Table.TOMBSTONES, hash).isPresent()) {
      throw new RecordRejectedException(410, ErrorCodes.MESSAGE_FORGOTTEN,
          "message " + hash + " was forgotten and cannot be published again");
    }
    if (storage.get(Table.MESSAGES, hash).isPresent()) {
      return new PublishResult(hash, PublishResult.PROCESSED);
    }
    if (storage.size(Table.MESSAGES) >= maxMessages) {
      throw new RecordRejectedException(507, ErrorCodes.STORE_FULL,
          "the record store holds its maximum of " + maxMessages + " messages");
    }
    final String owner = verified.sender().toLowerHex();
    final List<Write> writes = new ArrayList<>();
    if (verified.content() instanceof RecordContent.Forget forget) {
      forgetWrites(owner, hash, forget, writes);
    }
    writes.add(Write.put(Table.MESSAGES, hash, encode(message.toJson())));
    writes.add(Write.put(Table.INDEX, indexKey(message.type(), owner, hash), new byte[0]));
    storage.apply(writes);
    return new PublishResult(hash, PublishResult.PROCESSED);
  }

  private void forgetWrites(final String owner, final String forgetHash,
      final RecordContent.Forget forget, final List<Write> writes) {
    final Set<String> targets = new HashSet<>();
    for (final String target : forget.hashes()) {
      final Stored stored = load(target);
      if (stored == null) {
        continue;
      }
      if (!stored.owner.equals(owner)) {
        throw new RecordRejectedException(403, ErrorCodes.FORBIDDEN, "message " + target
            + " belongs to " + stored.message.sender() + "; only its sender may forget it");
      }
      if (stored.message.type() == MessageType.FORGET) {
        throw RecordRejectedException.invalid(
            ErrorCodes.INVALID_MESSAGE, "a FORGET cannot be forgotten (" + target + ")");
      }
      targets.add(target);
    }
    if (!forget.aggregates().isEmpty()) {
      final Set<String> keys = new HashSet<>(forget.aggregates());
      for (final Stored stored : ownerMessages(MessageType.AGGREGATE, owner)) {
        if (keys.contains(((RecordContent.Aggregate) stored.content).key())) {
          targets.add(stored.message.itemHash());
        }
      }
    }
    for (final String target : targets) {
      final Stored stored = load(target);
      writes.add(Write.remove(Table.MESSAGES, target));
      writes.add(Write.remove(Table.INDEX, indexKey(stored.message.type(), owner, target)));
      final ObjectNode tombstone = JsonNodeFactory.instance.objectNode();
      tombstone.put("owner", owner);
      tombstone.put("forgotten_by", forgetHash);
      writes.add(Write.put(Table.TOMBSTONES, target, encode(tombstone)));
    }
  }

  @Override
  public synchronized Map<String, JsonNode> aggregates(final EthAddress owner,
      final Collection<String> keys) {
    final Set<String> wanted = new HashSet<>(keys);
    final Map<String, List<RecordContent.Aggregate>> byKey = new TreeMap<>();
    final Map<RecordContent.Aggregate, String> hashes = new IdentityHashMap<>();
    for (final Stored stored : ownerMessages(MessageType.AGGREGATE, owner.toLowerHex())) {
      final RecordContent.Aggregate aggregate = (RecordContent.Aggregate) stored.content;
      if (wanted.isEmpty() || wanted.contains(aggregate.key())) {
        byKey.computeIfAbsent(aggregate.key(), k -> new ArrayList<>()).add(aggregate);
        hashes.put(aggregate, stored.message.itemHash());
      }
    }
    final Map<String, JsonNode> out = new LinkedHashMap<>();
    for (final Map.Entry<String, List<RecordContent.Aggregate>> entry : byKey.entrySet()) {
      final List<RecordContent.Aggregate> elements = entry.getValue();
      elements.sort(Comparator.comparingDouble(RecordContent.Aggregate::time)
          .thenComparing(hashes::get));
      final ObjectNode merged = JsonNodeFactory.instance.objectNode();
      for (final RecordContent.Aggregate element : elements) {
        element.content().properties().forEach(field -> {
          if (field.getValue().isNull()) {
            merged.remove(field.getKey());
          } else {
            merged.set(field.getKey(), field.getValue());
          }
        });
      }
      out.put(entry.getKey(), merged);
    }
    return out;
  }

  @Override
  public synchronized PostPage posts(final PostQuery query) {
    final List<Stored> candidates = new ArrayList<>();
    if (query.addresses().isEmpty()) {
      candidates.addAll(ownerMessages(MessageType.POST, ""));
    } else {
      final Set<String> owners = new HashSet<>();
      for (final String address : query.addresses()) {
        try {
          owners.add(EthAddress.parse(address).toLowerHex());
        } catch (final WalletFormatException e) {
          // Not an address: matches no post, as on Aleph.
          owners.add(address.toLowerCase(Locale.ROOT));
        }
      }
      for (final String owner : owners) {
        if (owner.startsWith("0x")) {
          candidates.addAll(ownerMessages(MessageType.POST, owner));
        }
      }
    }
    final List<PostRecord> matching = new ArrayList<>();
    for (final Stored stored : candidates) {
      final RecordContent.Post post = (RecordContent.Post) stored.content;
      if (matches(query.types(), post.type()) && matches(query.refs(), post.ref())
          && matches(query.channels(), stored.message.channel())
          && matches(query.hashes(), stored.message.itemHash())) {
        matching.add(PostRecord.of(stored.message, post));
      }
    }
    Comparator<PostRecord> order = Comparator.comparingDouble(PostRecord::time)
        .thenComparing(PostRecord::itemHash);
    if (!query.oldestFirst()) {
      order = order.reversed();
    }
    matching.sort(order);
    final long from = (long) (query.page() - 1) * query.pagination();
    final List<PostRecord> page = from >= matching.size() ? List.of()
        : matching.subList((int) from,
            (int) Math.min(matching.size(), from + query.pagination()));
    return new PostPage(page, query.page(), query.pagination(), matching.size());
  }

  @Override
  public void close() {
    storage.close();
  }

  private static boolean matches(final List<String> accepted, final String value) {
    return accepted.isEmpty() || value != null && accepted.contains(value);
  }

  /** A stored message with its parsed content. */
  private record Stored(AlephMessage message, String owner, RecordContent content) {}

  /** The stored messages of {@code type}; of one owner, or of all when {@code owner} is "". */
  private List<Stored> ownerMessages(final MessageType type, final String owner) {
    final String prefix = type.name() + SEP + (owner.isEmpty() ? "" : owner + SEP);
    final List<Stored> out = new ArrayList<>();
    for (final String key : storage.keys(Table.INDEX, prefix)) {
      final Stored stored = load(key.substring(key.lastIndexOf(SEP) + 1));
      if (stored != null) {
        out.add(stored);
      }
    }
    return out;
  }

  private Stored load(final String hash) {
    final byte[] bytes = storage.get(Table.MESSAGES, hash).orElse(null);
    if (bytes == null) {
      return null;
    }
    try {
      final AlephMessage message = AlephMessage.fromJson(RecordJson.MAPPER.readTree(bytes));
      // Verified when accepted; re-reading the content is enough here.
      final RecordContent content = parseContent(message);
      return new Stored(message, EthAddress.parse(content.address()).toLowerHex(), content);
    } catch (final IOException | RuntimeException e) {
      throw new RecordStoreException("stored message " + hash + " is unreadable: " + e, e);
    }
  }

  private static RecordContent parseContent(final AlephMessage message)
      throws JsonProcessingException {
    return RecordContent.parse(message.type(), CanonicalJson.parse(message.itemContent()));
  }

  private static String indexKey(final MessageType type, final String owner, final String hash) {
    return type.name() + SEP + owner + SEP + hash;
  }

  private static byte[] encode(final JsonNode node) {
    try {
      return RecordJson.MAPPER.writeValueAsBytes(node);
    } catch (final JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize a record", e);
    }
  }
}
