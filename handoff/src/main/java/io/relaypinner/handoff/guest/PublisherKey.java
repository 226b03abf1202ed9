package io.relaypinner.handoff.guest;

import io.relaypinner.handoff.wallet.EthPrivateKey;
import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.SecretFile;
import io.relaypinner.libp2p.crypto.Secp256k1PrivateKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import java.util.regex.Pattern;
import org.bouncycastle.crypto.digests.KeccakDigest;

/**
 * The guest's bootstrap publisher key (spec 2.9): a secp256k1 key generated on the guest as 32
 * random bytes, kept in {@code keys/publisher.key} as {@code 0x} + 64 hex digits and a newline
 * (mode 0600). It signs the guest's own records (acknowledgement, registration); its Ethereum
 * address is {@code bootstrap_publisher_address} in the guest's metadata.
 */
public final class PublisherKey {
  /** Largest file we read: the hex, a prefix and whitespace. */
  private static final long MAX_FILE_SIZE = 256;
  private static final Pattern HEX_KEY = Pattern.compile("(0x)?[0-9a-fA-F]{64}");

  private final Secp256k1PrivateKey key;
  private final String address;

  private PublisherKey(final Secp256k1PrivateKey key) {
    this.key = key;
    this.address = addressOf(key);
  }

  /** A key from its 32 raw bytes (not zero, below the curve order). */
  public static PublisherKey fromRaw(final byte[] raw) {
    return new PublisherKey(Secp256k1PrivateKey.fromRaw(raw));
  }

  /** A key from {@code 0x} + 64 hex digits (the prefix is optional). */
  public static PublisherKey fromHex(final String hex) {
    final String text = hex.strip();
    if (!HEX_KEY.matcher(text).matches()) {
      throw new KeyFormatException("a publisher key is 32 bytes as 64 hex digits");
    }
    return fromRaw(HexFormat.of().parseHex(text.startsWith("0x") ? text.substring(2) : text));
  }

  /** 32 random bytes, drawn again in the (negligible) case they are not a valid key. */
  public static PublisherKey generate(final SecureRandom random) {
    final byte[] raw = new byte[32];
    while (true) {
      random.nextBytes(raw);
      try {
        return fromRaw(raw);
      } catch (final KeyFormatException e) {
        // zero or not below the group order: draw again
      } finally {
        Arrays.fill(raw, (byte) 0);
      }
    }
  }

  /**
   * Reads the key at {@code file}, or creates it there ({@link SecretFile#createIfAbsent}: mode
   * 0600, temporary file, fsync, hard link that fails when another process created the key first,
   * directory fsync).
   *
   * @throws KeyFormatException when the file exists but holds no key (it is never replaced)
   * @throws UncheckedIOException when the file cannot be read or written
   */
  public static Loaded loadOrCreate(final Path file, final SecureRandom random) {
    try {
      if (Files.exists(file)) {
        return new Loaded(read(file), false);
      }
      final PublisherKey fresh = generate(random);
      if (SecretFile.createIfAbsent(file, fresh.fileContent())) {
        return new Loaded(fresh, true);
      }
      return new Loaded(read(file), false);
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot read or write " + file + ": " + e.getMessage(), e);
    }
  }

  /** Writes {@code key} to {@code file}, replacing what is there, atomically (mode 0600). */
  static void replace(final Path file, final PublisherKey key) throws IOException {
    SecretFile.replace(file, key.fileContent());
  }

  /** What the key file holds: {@code 0x} + 64 hex digits and a newline. */
  private byte[] fileContent() {
    return (toHex() + "\n").getBytes(StandardCharsets.US_ASCII);
  }

  private static PublisherKey read(final Path file) throws IOException {
    if (Files.size(file) > MAX_FILE_SIZE) {
      throw new KeyFormatException(file + " is too large to be a publisher key");
    }
    try {
      return fromHex(Files.readString(file, StandardCharsets.US_ASCII));
    } catch (final KeyFormatException e) {
      throw new KeyFormatException(file + " does not hold a publisher key: " + e.getMessage());
    }
  }

  /** What {@link #loadOrCreate} found. */
  public record Loaded(PublisherKey key, boolean created) {}

  /** The secp256k1 key (for signing). */
  public Secp256k1PrivateKey secp256k1() {
    return key;
  }

  /** The same key as an Ethereum account key (for record signing). */
  public EthPrivateKey ethKey() {
    return EthPrivateKey.fromBytes(key.raw());
  }

  /** {@code 0x} + 64 lowercase hex digits. */
  public String toHex() {
    return "0x" + HexFormat.of().formatHex(key.raw());
  }

  /** The Ethereum address, EIP-55 mixed case. */
  public String address() {
    return address;
  }

  /** The EIP-55 address of a secp256k1 key: the last 20 bytes of Keccak-256(x || y). */
  static String addressOf(final Secp256k1PrivateKey key) {
    final byte[] uncompressed = key.publicKey().uncompressed();
    final byte[] hash = keccak256(Arrays.copyOfRange(uncompressed, 1, uncompressed.length));
    return checksum(HexFormat.of().formatHex(hash, 12, 32));
  }

  /** EIP-55: a hex letter is upper case when the nibble of Keccak-256(lowercase hex) is >= 8. */
  static String checksum(final String lowerHex) {
    final String lower = lowerHex.toLowerCase(Locale.ROOT);
    final byte[] hash = keccak256(lower.getBytes(StandardCharsets.US_ASCII));
    final StringBuilder out = new StringBuilder("0x");
    for (int i = 0; i < lower.length(); i++) {
      final int nibble = (hash[i / 2] >> (i % 2 == 0 ? 4 : 0)) & 0xf;
      final char c = lower.charAt(i);
      out.append(nibble >= 8 ? Character.toUpperCase(c) : c);
    }
    return out.toString();
  }

  static byte[] keccak256(final byte[] data) {
    final KeccakDigest digest = new KeccakDigest(256);
    digest.update(data, 0, data.length);
    final byte[] out = new byte[32];
    digest.doFinal(out, 0);
    return out;
  }

  @Override
  public String toString() {
    return "PublisherKey[" + address + "]";
  }
}
