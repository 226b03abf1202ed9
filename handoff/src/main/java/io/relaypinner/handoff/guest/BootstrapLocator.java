package io.relaypinner.handoff.guest;

import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.WalletFormatException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The pull handoff's locator (notes/handoff.md 3.1): the owner address and deployment token the
 * deployer wrote into the comment of the guest's SSH key, {@code aleph-bootstrap-config:<owner>:
 * <token>}, read from {@code authorized_keys} (blank and {@code #} lines skipped; the first such
 * word on any line wins).
 *
 * @param owner the owner (deployer wallet) whose aggregate carries the configuration
 * @param token the deployment token, the entry's name in that aggregate
 */
public record BootstrapLocator(EthAddress owner, String token) {
  /** {@code authorized_keys} larger than this is not read. */
  public static final long MAX_FILE_SIZE = 1 << 20;
  private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9._-]{1,128}");

  /** The default file (root's, as the hosting provider writes it). */
  public static final Path DEFAULT_AUTHORIZED_KEYS = Path.of("/root/.ssh/authorized_keys");

  /** Reads the locator; empty when the file or the comment is absent or malformed. */
  public static Optional<BootstrapLocator> read(final Path authorizedKeys) throws IOException {
    try {
      if (Files.size(authorizedKeys) > MAX_FILE_SIZE) {
        throw new IOException(authorizedKeys + " is larger than " + MAX_FILE_SIZE + " bytes");
      }
      return parse(Files.readAllLines(authorizedKeys, StandardCharsets.UTF_8));
    } catch (final NoSuchFileException e) {
      return Optional.empty();
    }
  }

  /** Finds the locator in {@code authorized_keys} lines. */
  public static Optional<BootstrapLocator> parse(final List<String> lines) {
    for (final String raw : lines) {
      final String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      for (final String word : line.split("\\s+")) {
        if (!word.startsWith(GuestRecords.LOCATOR_PREFIX)) {
          continue;
        }
        final String[] parts =
            word.substring(GuestRecords.LOCATOR_PREFIX.length()).split(":", 2);
        if (parts.length == 2 && TOKEN.matcher(parts[1]).matches()) {
          try {
            return Optional.of(new BootstrapLocator(EthAddress.parse(parts[0]), parts[1]));
          } catch (final WalletFormatException e) {
            // not an address: keep looking
          }
        }
      }
    }
    return Optional.empty();
  }
}
