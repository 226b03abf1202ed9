package io.relaypinner.orbitdb;

/**
 * Why an entry was not accepted into a log; {@link #label()} is the counter label
 * ({@code orbitdb_entries_rejected_total{reason=…}} style).
 */
public enum RejectReason {
  /** Not a version 2 entry block: bad DAG-CBOR, a missing or mistyped field, too big. */
  MALFORMED_ENTRY("malformed_entry"),
  /** {@code entry.id} is not this database's address. */
  WRONG_LOG("wrong_log"),
  /** The signature does not verify over the entry's signed fields with {@code entry.key}. */
  FORGED_SIGNATURE("forged_signature"),
  /** {@code entry.key} is not the identity's {@code publicKey}. */
  KEY_IDENTITY_MISMATCH("key_identity_mismatch"),
  /** The access controller does not list the identity's id. */
  UNAUTHORIZED_WRITER("unauthorized_writer"),
  /** The identity block is malformed or its signatures do not verify. */
  INVALID_IDENTITY("invalid_identity"),
  /** The identity has a type this node cannot verify ({@code webauthn}, …). */
  UNKNOWN_IDENTITY_TYPE("unknown_identity_type"),
  /**
   * The identity block could not be fetched: not the writer's fault; the log counts the entry as
   * unavailable and retries it later.
   */
  IDENTITY_UNAVAILABLE("identity_unavailable");

  private final String label;

  RejectReason(final String label) {
    this.label = label;
  }

  /** The snake-case label. */
  public String label() {
    return label;
  }
}
