package io.relaypinner.handoff.records;

import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.handoff.wallet.EthAddress;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The subset of the Aleph API the handoff uses: publish signed messages, read an owner's merged
 * aggregates, list posts. Implementations: {@code HttpRecordStore} (any server speaking the API:
 * public Aleph nodes or the embedded record service) and {@code LocalRecordStore} (the embedded
 * service's engine, in-process).
 */
public interface RecordStore {
  /**
   * Publishes a signed message.
   *
   * @throws RecordRejectedException when the store refuses it (the message's fault)
   * @throws RecordStoreException when the store cannot be reached or answers nonsense
   */
  PublishResult publish(AlephMessage message);

  /**
   * The merged aggregates of {@code owner}: aggregate key to its object of entries. Only
   * {@code keys} when not empty, all keys otherwise. Empty when the owner has none of them.
   *
   * @throws RecordStoreException when the store cannot be reached or answers nonsense
   */
  Map<String, JsonNode> aggregates(EthAddress owner, Collection<String> keys);

  /** The merged object of one aggregate key, if the owner has it. */
  default Optional<JsonNode> aggregate(final EthAddress owner, final String key) {
    return Optional.ofNullable(aggregates(owner, List.of(key)).get(key));
  }

  /**
   * One entry of one aggregate key, e.g. {@code aggregateEntry(owner, "vm-bootstrap-config",
   * token)}. A deleted entry ({@code null} on public Aleph, removed on the record service) is
   * empty.
   */
  default Optional<JsonNode> aggregateEntry(final EthAddress owner, final String key,
      final String entry) {
    return aggregate(owner, key).map(object -> object.get(entry))
        .filter(value -> !value.isNull());
  }

  /**
   * One page of posts matching {@code query}.
   *
   * @throws RecordRejectedException when the store refuses the query
   * @throws RecordStoreException when the store cannot be reached or answers nonsense
   */
  PostPage posts(PostQuery query);
}
