package io.relaypinner.relay.replication;

import io.relaypinner.relay.sync.DatabaseSyncer;
import io.relaypinner.relay.sync.SyncContext;
import io.relaypinner.relay.sync.SyncResult;
import java.util.Objects;

/**
 * The node's {@link DatabaseSyncer}: runs each sync on the {@link ReplicationService}. The
 * engine exists before the network does, so the service is attached once the host, gossipsub
 * and bitswap are up; a sync before that fails (and is retried by the next trigger).
 */
public final class ReplicationSyncer implements DatabaseSyncer {
  private volatile ReplicationService service;

  /** Attaches the service that does the work. */
  public void attach(final ReplicationService replication) {
    this.service = Objects.requireNonNull(replication, "replication");
  }

  @Override
  public SyncResult sync(final SyncContext context) throws Exception {
    final ReplicationService current = service;
    if (current == null) {
      throw new IllegalStateException("replication is not running yet");
    }
    return current.sync(context);
  }
}
