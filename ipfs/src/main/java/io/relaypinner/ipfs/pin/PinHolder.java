package io.relaypinner.ipfs.pin;

import java.util.Objects;

/**
 * Who holds a pin ({@link PinStore}): a pinned root stays pinned while at least one holder holds
 * it, and a holder can release only its own hold. The id is a kind and a name,
 * {@code <kind>:<name>}, e.g. {@code replication:/orbitdb/zdpu…} (the replication of one
 * database), {@code pinsvc:<owner>/<request id>} (one Pinning Service API request),
 * {@code import:/orbitdb/zdpu…}; {@link #LEGACY} holds the pins recorded before pins had holders.
 *
 * <p>The id is part of a datastore key: at most {@link #MAX_LENGTH} characters, no control
 * characters, a kind of lowercase letters.
 */
public record PinHolder(String id) {
  /** Longest id. */
  public static final int MAX_LENGTH = 256;

  /**
   * The holder of every pin recorded before pins had holders (and of pins an older relay on
   * shared stores records): nothing releases it, so nothing stored is lost by the upgrade.
   */
  public static final PinHolder LEGACY = new PinHolder("legacy:");

  /** Validates. */
  public PinHolder {
    Objects.requireNonNull(id, "id");
    final int colon = id.indexOf(':');
    if (colon < 1 || id.length() > MAX_LENGTH) {
      throw new IllegalArgumentException("pin holder must be <kind>:<name> of at most "
          + MAX_LENGTH + " characters: " + id);
    }
    for (int i = 0; i < colon; i++) {
      final char c = id.charAt(i);
      if (c < 'a' || c > 'z') {
        throw new IllegalArgumentException("pin holder kind must be lowercase letters: " + id);
      }
    }
    for (int i = 0; i < id.length(); i++) {
      if (Character.isISOControl(id.charAt(i))) {
        throw new IllegalArgumentException("pin holder contains a control character at " + i);
      }
    }
  }

  /** The holder {@code <kind>:<name>}. */
  public static PinHolder of(final String kind, final String name) {
    return new PinHolder(kind + ":" + name);
  }

  /** The kind (before the colon). */
  public String kind() {
    return id.substring(0, id.indexOf(':'));
  }

  /** Reads an id stored in a key; null when it is not a holder id. */
  static PinHolder parse(final String id) {
    try {
      return new PinHolder(id);
    } catch (final IllegalArgumentException e) {
      return null;
    }
  }

  @Override
  public String toString() {
    return id;
  }
}
