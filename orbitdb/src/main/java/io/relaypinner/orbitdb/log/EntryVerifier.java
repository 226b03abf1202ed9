package io.relaypinner.orbitdb.log;

import io.relaypinner.orbitdb.EntryRejectedException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.RejectReason;
import io.relaypinner.orbitdb.access.AccessController;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.Identity;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Verifies entries of one database, in this order ({@code src/oplog/log.js} {@code verifyEntry},
 * stricter where noted):
 *
 * <ol>
 *   <li>{@code entry.id} is the database address ({@link RejectReason#WRONG_LOG});
 *   <li>the identity block {@code entry.identity} resolves and verifies ({@link Identities});
 *   <li>{@code entry.key} equals the identity's {@code publicKey}
 *       ({@link RejectReason#KEY_IDENTITY_MISMATCH}). OrbitDB does not check this; it always
 *       writes it so;
 *   <li>the access controller lets {@code identity.id} write
 *       ({@link RejectReason#UNAUTHORIZED_WRITER}): a lookup, so before the signature;
 *   <li>{@code entry.sig} verifies with {@code entry.key} over the entry's signed fields,
 *       spliced from the block, by the rule of the identity's type
 *       ({@link io.relaypinner.orbitdb.identity.IdentityVerifiers#verifyEntry}: the key store
 *       rule, or a passkey assertion for {@code webauthn-varsig})
 *       ({@link RejectReason#FORGED_SIGNATURE}).
 * </ol>
 */
public final class EntryVerifier {
  private final OrbitDbAddress address;
  private final String logId;
  private final AccessController accessController;
  private final Identities identities;
  private final Executor executor;

  /**
   * @param executor runs the signature check (never a Netty event loop)
   */
  public EntryVerifier(final OrbitDbAddress address, final AccessController accessController,
      final Identities identities, final Executor executor) {
    this.address = Objects.requireNonNull(address, "address");
    this.logId = address.toString();
    this.accessController = Objects.requireNonNull(accessController, "accessController");
    this.identities = Objects.requireNonNull(identities, "identities");
    this.executor = Objects.requireNonNull(executor, "executor");
  }

  public OrbitDbAddress address() {
    return address;
  }

  public AccessController accessController() {
    return accessController;
  }

  /**
   * The entry's writer identity when the entry is valid; otherwise fails with
   * {@link EntryRejectedException}.
   */
  public CompletableFuture<Identity> verify(final Entry entry) {
    if (!entry.id().equals(logId)) {
      return CompletableFuture.failedFuture(new EntryRejectedException(RejectReason.WRONG_LOG,
          "entry " + entry.hash() + " belongs to log " + abbreviate(entry.id()) + ", not "
              + logId));
    }
    return identities.resolve(entry.identity())
        .thenApplyAsync(identity -> check(entry, identity), executor);
  }

  private Identity check(final Entry entry, final Identity identity) {
    if (!entry.key().equals(identity.publicKey())
        || entry.binarySignature() != identity.binary()) {
      throw new EntryRejectedException(RejectReason.KEY_IDENTITY_MISMATCH,
          "entry " + entry.hash() + " key " + abbreviate(entry.key())
              + " is not the public key of identity " + identity.hash());
    }
    // The access controller's check is a set lookup: before the signature, which costs a
    // curve operation (an unauthorized writer's entries cost no signature check).
    if (!accessController.canWrite(identity.id())) {
      throw new EntryRejectedException(RejectReason.UNAUTHORIZED_WRITER,
          "entry " + entry.hash() + " writer " + abbreviate(identity.id())
              + " is not allowed by " + accessController.ref());
    }
    if (!identities.verifiers().verifyEntry(identity, entry.sig(), entry.signedBytes())) {
      throw new EntryRejectedException(RejectReason.FORGED_SIGNATURE,
          "entry " + entry.hash() + " signature does not verify");
    }
    return identity;
  }

  private static String abbreviate(final String text) {
    return text.length() <= 80 ? text : text.substring(0, 80) + "...";
  }
}
