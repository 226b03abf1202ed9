package io.relaypinner.handoff.deploy;

import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.wallet.EthAddress;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.regex.Pattern;

/**
 * SSH public key lines for the instance's {@code authorized_keys} (notes/handoff.md 3.1): the
 * user's key normalized to {@code <algorithm> <base64>}, with the pull locator
 * {@code aleph-bootstrap-config:<owner>:<token>} as its comment (any original comment dropped).
 */
public final class SshKeys {
  private static final Pattern ALGORITHM = Pattern.compile("[a-z0-9@.-]{3,64}");
  private static final Pattern BASE64 = Pattern.compile("[A-Za-z0-9+/]+={0,2}");

  private SshKeys() {}

  /**
   * The first key of an OpenSSH public key file, as {@code <algorithm> <base64>}.
   *
   * @throws IllegalArgumentException when no line is a public key
   */
  public static String parsePublicKey(final List<String> lines) {
    for (final String raw : lines) {
      final String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      final String[] words = line.split("\\s+");
      if (words.length >= 2 && ALGORITHM.matcher(words[0]).matches()
          && BASE64.matcher(words[1]).matches() && words[1].length() >= 16) {
        return words[0] + " " + words[1];
      }
      throw new IllegalArgumentException("not an OpenSSH public key line (\"<algorithm> <base64> "
          + "[comment]\"); is this the private key? Give the .pub file");
    }
    throw new IllegalArgumentException("no public key in the file");
  }

  /**
   * A fresh Ed25519 public key whose private half is discarded: an instance nobody can log into,
   * for deployments that need no SSH access (the local provider never uses SSH).
   */
  public static String throwawayKey() {
    try {
      final byte[] encoded = KeyPairGenerator.getInstance("Ed25519").generateKeyPair()
          .getPublic().getEncoded();
      // X.509 SubjectPublicKeyInfo of Ed25519 ends with the 32-byte raw key.
      final byte[] raw = Arrays.copyOfRange(encoded, encoded.length - 32, encoded.length);
      final ByteArrayOutputStream blob = new ByteArrayOutputStream();
      writeString(blob, "ssh-ed25519".getBytes(StandardCharsets.US_ASCII));
      writeString(blob, raw);
      return "ssh-ed25519 " + Base64.getEncoder().encodeToString(blob.toByteArray());
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no Ed25519", e);
    }
  }

  private static void writeString(final ByteArrayOutputStream out, final byte[] value) {
    out.write(value.length >>> 24);
    out.write(value.length >>> 16);
    out.write(value.length >>> 8);
    out.write(value.length);
    out.writeBytes(value);
  }

  /** {@code key} (normalized) with the pull locator as its comment. */
  public static String withLocator(final String key, final EthAddress owner,
      final String token) {
    return parsePublicKey(List.of(key)) + " " + GuestRecords.LOCATOR_PREFIX + owner + ":"
        + token;
  }
}
