package io.relaypinner.handoff.records;

/**
 * The Aleph message types this project reads and writes. Aleph also has STORE, PROGRAM and
 * INSTANCE; the record service rejects those ({@code unsupported_type}).
 */
public enum MessageType {
  /** Keyed objects per owner address, merged key by key. */
  AGGREGATE,
  /** A typed document with an optional {@code ref}. */
  POST,
  /** Removes the sender's own earlier messages. */
  FORGET
}
