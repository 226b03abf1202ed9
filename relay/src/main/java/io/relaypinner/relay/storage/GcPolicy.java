package io.relaypinner.relay.storage;

/**
 * Whether this node may collect garbage now. One node of a group sharing stores (S3 and
 * PostgreSQL) should sweep at a time: a leader lease plugs in here. The default always may.
 */
@FunctionalInterface
public interface GcPolicy {
  /** Collect on every node (stores of one's own). */
  GcPolicy ALWAYS = () -> true;

  /** Whether a GC run may start now; a false answer skips the run (counted). */
  boolean mayCollect();
}
