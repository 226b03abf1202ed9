package io.relaypinner.orbitdb;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.MultiformatException;
import java.util.Objects;
import java.util.Optional;

/**
 * An OrbitDB database address, {@code /orbitdb/<manifest CID>} ({@code src/address.js}): the CID
 * of the database's manifest block, a CIDv1 dag-cbor sha2-256 in base58btc ({@code zdpu…}). Its
 * canonical string is the log id of every entry ({@code entry.id}), the pubsub topic and the
 * suffix of the heads exchange protocol id.
 *
 * <p>Parsing is strict: exactly {@code /orbitdb/} followed by a base58btc CIDv1 with the dag-cbor
 * codec, nothing after it. (OrbitDB itself also strips extra slashes; no peer sends those.) This
 * is the relay's one rule for a database address, applied by every route, the sync engine, the
 * topic admission and the stored state alike: @orbitdb/core parses the CID with
 * {@code CID.parse(text, base58btc)}, so an address in another base ({@code /orbitdb/bafy…}) is
 * not one a JS peer can open or announce, and the relay refuses it rather than syncing something
 * no peer would ever serve.
 */
public record OrbitDbAddress(Cid manifest) {
  /** The path prefix. */
  public static final String PREFIX = "/orbitdb/";

  /** Longest address text accepted. */
  public static final int MAX_LENGTH = PREFIX.length() + 128;

  /**
   * Validates.
   *
   * @throws InvalidAddressException when the CID is not a CIDv1 dag-cbor
   */
  public OrbitDbAddress {
    Objects.requireNonNull(manifest, "manifest");
    if (manifest.version() != 1 || manifest.codec() != Multicodec.DAG_CBOR.code()) {
      throw new InvalidAddressException(
          "an OrbitDB manifest CID must be a CIDv1 dag-cbor, not " + manifest);
    }
  }

  /**
   * Parses {@code /orbitdb/zdpu…}.
   *
   * @throws InvalidAddressException when it is not exactly that form
   */
  public static OrbitDbAddress parse(final String text) {
    Objects.requireNonNull(text, "text");
    if (text.length() > MAX_LENGTH) {
      throw new InvalidAddressException("OrbitDB address of " + text.length()
          + " characters exceeds " + MAX_LENGTH);
    }
    if (!text.startsWith(PREFIX)) {
      throw new InvalidAddressException("OrbitDB address must start with " + PREFIX + ": "
          + text);
    }
    final String cid = text.substring(PREFIX.length());
    if (cid.isEmpty() || cid.charAt(0) != Multibase.Base.BASE58BTC.prefix()) {
      throw new InvalidAddressException("OrbitDB address must hold a base58btc CID: " + text);
    }
    try {
      return new OrbitDbAddress(Cid.parse(cid));
    } catch (final MultiformatException e) {
      throw new InvalidAddressException("OrbitDB address holds no valid CID: " + text, e);
    }
  }

  /**
   * Parses {@code /orbitdb/zdpu…} when it is exactly that form: the address, or empty (also for
   * {@code null}) where {@link #parse} would throw.
   */
  public static Optional<OrbitDbAddress> tryParse(final String text) {
    if (text == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(parse(text));
    } catch (final InvalidAddressException e) {
      return Optional.empty();
    }
  }

  /** Whether {@code text} parses ({@link #tryParse}). */
  public static boolean isValid(final String text) {
    return tryParse(text).isPresent();
  }

  /** The heads exchange protocol id: {@code /orbitdb/heads/orbitdb/zdpu…}. */
  public String headsProtocolId() {
    return "/orbitdb/heads" + this;
  }

  /** The pubsub topic, which is the address itself. */
  public String topic() {
    return toString();
  }

  /** {@code /orbitdb/zdpu…}. */
  @Override
  public String toString() {
    return PREFIX + manifest.toString(Multibase.Base.BASE58BTC);
  }
}
