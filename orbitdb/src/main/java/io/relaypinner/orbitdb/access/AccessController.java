package io.relaypinner.orbitdb.access;

/**
 * Decides whether a writer may append to a database: OrbitDB's {@code canAppend} without the
 * identity check, which the entry verifier does first ({@code src/access-controllers/}).
 */
public sealed interface AccessController permits IpfsAccessController, OrbitDbAccessController {
  /** The wildcard that admits every verified identity. */
  String ANY = "*";

  /** The controller type as in the manifest: {@code ipfs} or {@code orbitdb}. */
  String type();

  /** The manifest field this controller was opened from. */
  AccessControllerRef ref();

  /** Whether the identity with id {@code identityId} (verified by the caller) may write. */
  boolean canWrite(String identityId);
}
