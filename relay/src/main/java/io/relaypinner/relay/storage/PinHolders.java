package io.relaypinner.relay.storage;

import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.orbitdb.OrbitDbAddress;

/**
 * The holders of the relay's pins ({@link io.relaypinner.ipfs.pin.PinStore}), one per reason a
 * CID is kept: a pin is released only by the holder that took it, and its blocks become garbage
 * only when nothing holds it any more.
 *
 * <ul>
 *   <li>{@code replication:/orbitdb/<manifest>}: the replication of one followed database (its
 *       manifest and controller blocks, entries, identities and media);
 *   <li>{@code pinsvc:<owner>/<request id>}: one Pinning Service API request ({@code /pins});
 *       deleting the request releases exactly this hold;
 *   <li>{@code import:/orbitdb/<manifest>}: what {@code POST /pinning/import} stored of one
 *       database;
 *   <li>{@code legacy:}: pins recorded before pins had holders (never released).
 * </ul>
 * The gateway cache holds no pin: it keeps unpinned blocks from GC while they are cached
 * ({@link GatewayCache}).
 */
public final class PinHolders {
  private PinHolders() {
  }

  /** The replication of {@code address}. */
  public static PinHolder replication(final OrbitDbAddress address) {
    return PinHolder.of("replication", address.toString());
  }

  /** One Pinning Service API request of the token owner {@code owner}. */
  public static PinHolder request(final String owner, final String requestId) {
    return PinHolder.of("pinsvc", owner + "/" + requestId);
  }

  /** An import of {@code address}. */
  public static PinHolder imported(final OrbitDbAddress address) {
    return PinHolder.of("import", address.toString());
  }
}
