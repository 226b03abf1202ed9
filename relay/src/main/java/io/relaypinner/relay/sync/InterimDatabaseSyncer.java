package io.relaypinner.relay.sync;

/**
 * The node's {@link DatabaseSyncer} until OrbitDB replication exists: it does what can honestly be
 * done now and nothing more. A sync counts as an operation, the engine records the address in the
 * sync history, and the result reports zero entries, {@code receivedUpdate: false},
 * {@code fallbackScanUsed: false} and no media CIDs, because nothing is replicated yet.
 */
public final class InterimDatabaseSyncer implements DatabaseSyncer {
  @Override
  public SyncResult sync(final SyncContext context) {
    context.countOperation();
    return SyncResult.empty(context.address());
  }
}
