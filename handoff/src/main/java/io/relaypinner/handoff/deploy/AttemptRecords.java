package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordStoreException;
import java.util.ArrayList;
import java.util.List;

/**
 * The deployer's records of one attempt (the token's entry of the wallet's
 * {@code vm-bootstrap-config} aggregate): publishes them and, when the attempt ends, deletes the
 * entry and FORGETs every message published for it, the delete included.
 */
final class AttemptRecords {
  private final DeployContext context;
  private final String token;
  private final List<String> published = new ArrayList<>();
  private final List<String> forgotten = new ArrayList<>();
  private final List<String> errors = new ArrayList<>();

  AttemptRecords(final DeployContext context, final String token) {
    this.context = context;
    this.token = token;
  }

  /** Sets the token's entry to {@code entry}. */
  void publishEntry(final ObjectNode entry) throws AttemptFailed {
    final ObjectNode entries = JsonNodeFactory.instance.objectNode();
    entries.set(token, entry);
    final AlephMessage message = context.signer().aggregate(GuestRecords.CONFIG_AGGREGATE_KEY,
        entries, context.config().channel());
    try {
      context.store().publish(message);
    } catch (final RecordRejectedException | RecordStoreException e) {
      throw new AttemptFailed("the record store refused the configuration entry: "
          + e.getMessage());
    }
    published.add(message.itemHash());
  }

  /** Deletes the token's entry and forgets every message published for it. */
  void remove(final String reason) {
    if (published.isEmpty()) {
      return;
    }
    try {
      final AlephMessage delete = context.signer().deleteAggregateEntries(
          GuestRecords.CONFIG_AGGREGATE_KEY, List.of(token), context.config().channel());
      context.store().publish(delete);
      published.add(delete.itemHash());
      context.store().publish(context.signer().forget(published, List.of(), reason,
          context.config().channel()));
      forgotten.addAll(published);
      published.clear();
      if (context.store().aggregateEntry(context.owner(), GuestRecords.CONFIG_AGGREGATE_KEY,
          token).isPresent()) {
        errors.add("the aggregate entry " + token + " is still visible");
      }
    } catch (final RecordRejectedException | RecordStoreException e) {
      errors.add("records: " + e.getMessage());
    }
  }

  List<String> forgotten() {
    return List.copyOf(forgotten);
  }

  List<String> errors() {
    return List.copyOf(errors);
  }
}
