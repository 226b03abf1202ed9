package io.relaypinner.orbitdb.access;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.orbitdb.InvalidAddressException;
import io.relaypinner.orbitdb.MalformedBlockException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code accessController} field of a manifest, {@code /<type>/<rest>}
 * ({@code src/orbitdb.js}: the type is the first path segment). For the built-in types the rest
 * names a block: {@code /ipfs/<cid>} is the CID of an {@link IpfsAccessController} manifest,
 * {@code /orbitdb/<cid>} the address of the database that holds an
 * {@link OrbitDbAccessController}'s capabilities. Any other type is kept as text so that callers
 * can report it ({@link io.relaypinner.orbitdb.UnsupportedTypeException}).
 *
 * @param text the field as given
 * @param type the first path segment
 */
public record AccessControllerRef(String text, String type) {
  /** The type of {@link IpfsAccessController}. */
  public static final String IPFS = "ipfs";

  /** The type of {@link OrbitDbAccessController}. */
  public static final String ORBITDB = "orbitdb";

  /** Longest field accepted. */
  public static final int MAX_LENGTH = 512;

  public AccessControllerRef {
    Objects.requireNonNull(text, "text");
    Objects.requireNonNull(type, "type");
  }

  /**
   * Parses the manifest field.
   *
   * @throws MalformedBlockException when it is not {@code /<type>/<rest>}, or a built-in type
   *     does not name a valid CID or address
   */
  public static AccessControllerRef parse(final String text) {
    if (text.length() > MAX_LENGTH || text.length() < 3 || text.charAt(0) != '/') {
      throw new MalformedBlockException("access controller must be /<type>/<cid>, not \""
          + abbreviate(text) + "\"");
    }
    final int slash = text.indexOf('/', 1);
    if (slash <= 1 || slash == text.length() - 1) {
      throw new MalformedBlockException("access controller must be /<type>/<cid>, not \""
          + abbreviate(text) + "\"");
    }
    final AccessControllerRef ref = new AccessControllerRef(text, text.substring(1, slash));
    // Fail early for malformed built-ins.
    if (ref.type.equals(IPFS)) {
      ref.ipfsManifest();
    } else if (ref.type.equals(ORBITDB)) {
      ref.orbitDbAddress();
    }
    return ref;
  }

  private static String abbreviate(final String text) {
    return text.length() <= 80 ? text : text.substring(0, 80) + "...";
  }

  /** Whether this node can verify writes under this controller type. */
  public boolean isSupported() {
    return type.equals(IPFS) || type.equals(ORBITDB);
  }

  /**
   * The CID of the {@code ipfs} controller's manifest block.
   *
   * @throws IllegalStateException for another type
   * @throws MalformedBlockException when the rest is not a dag-cbor CID
   */
  public Cid ipfsManifest() {
    if (!type.equals(IPFS)) {
      throw new IllegalStateException("not an ipfs access controller: " + text);
    }
    try {
      final Cid cid = Cid.parse(text.substring(IPFS.length() + 2));
      if (cid.codec() != Multicodec.DAG_CBOR.code()) {
        throw new MalformedBlockException("ipfs access controller manifest is not dag-cbor: "
            + text);
      }
      return cid;
    } catch (final MultiformatException e) {
      throw new MalformedBlockException("ipfs access controller holds no valid CID: " + text, e);
    }
  }

  /**
   * The address of the {@code orbitdb} controller's database.
   *
   * @throws IllegalStateException for another type
   * @throws MalformedBlockException when the field is not a valid address
   */
  public OrbitDbAddress orbitDbAddress() {
    if (!type.equals(ORBITDB)) {
      throw new IllegalStateException("not an orbitdb access controller: " + text);
    }
    try {
      return OrbitDbAddress.parse(text);
    } catch (final InvalidAddressException e) {
      throw new MalformedBlockException("orbitdb access controller is no valid address: " + text,
          e);
    }
  }

  /** The CID of the block this refers to when the type is built in. */
  public Optional<Cid> blockCid() {
    if (type.equals(IPFS)) {
      return Optional.of(ipfsManifest());
    }
    if (type.equals(ORBITDB)) {
      return Optional.of(orbitDbAddress().manifest());
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    return text;
  }
}
