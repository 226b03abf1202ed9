package io.relaypinner.relay.replication;

import io.relaypinner.relay.sync.DatabaseSyncer;
import io.relaypinner.relay.sync.SyncContext;
import io.relaypinner.relay.sync.SyncResult;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The node's {@link DatabaseSyncer}: runs each sync on the {@link ReplicationService}. The
 * engine exists before the network does, so the service is attached once the host, gossipsub
 * and bitswap are up; a sync before that fails (and is retried by the next trigger). A database
 * the operator's policy ({@code RELAY_ORBITDB_ALLOW}, {@code RELAY_ORBITDB_DENY}) refuses fails
 * at once.
 */
public final class ReplicationSyncer implements DatabaseSyncer {
  private volatile ReplicationService service;
  private volatile Predicate<String> permitted = address -> true;

  /** Attaches the service that does the work, and the operator's policy. */
  public void attach(final ReplicationService replication, final Predicate<String> policy) {
    this.permitted = Objects.requireNonNull(policy, "policy");
    this.service = Objects.requireNonNull(replication, "replication");
  }

  @Override
  public SyncResult sync(final SyncContext context) throws Exception {
    final ReplicationService current = service;
    if (current == null) {
      throw new IllegalStateException("replication is not running yet");
    }
    if (!permitted.test(context.address())) {
      throw new IllegalStateException(context.address()
          + " is not followed by this relay (RELAY_ORBITDB_ALLOW / RELAY_ORBITDB_DENY)");
    }
    return current.sync(context);
  }
}
