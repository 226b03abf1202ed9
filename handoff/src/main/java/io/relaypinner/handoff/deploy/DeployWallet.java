package io.relaypinner.handoff.deploy;

import io.relaypinner.handoff.wallet.EthPrivateKey;
import io.relaypinner.handoff.wallet.WalletFormatException;
import io.relaypinner.libp2p.crypto.SecretFile;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Map;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The deploy wallet: the Ethereum key that owns a deployment. It signs the deployer's records
 * (the {@code vm-bootstrap-config} aggregate, FORGETs) and the owner authorization; its address is
 * the owner in the pull locator. Where it comes from, first match wins:
 *
 * <ol>
 *   <li>an explicit key file ({@code --wallet-key-file}): {@code 0x} + 64 hex digits;
 *   <li>the environment variable {@value #ENV} (same form);
 *   <li>{@code <deployments dir>/wallet.key}, generated on first use with mode 0600.
 * </ol>
 *
 * The key never leaves this process: only signatures and its address do.
 */
public final class DeployWallet {
  /** Environment variable holding the deploy wallet key. */
  public static final String ENV = "RELAY_DEPLOY_WALLET_KEY";
  /** File name of the generated key in the deployments directory. */
  public static final String DEFAULT_FILE = "wallet.key";
  /** HMAC message prefix of the derived publisher key (notes/handoff.md 6.2). */
  public static final String PUBLISHER_LABEL_PREFIX = "le-space/bootstrap-publisher/v1:";
  private static final BigInteger N = new BigInteger(
      "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141", 16);

  private DeployWallet() {}

  /** Where the key came from (for messages; never the key). */
  public enum Source { FILE, ENVIRONMENT, GENERATED, STORED }

  /** A loaded wallet key and where it came from. */
  public record Loaded(EthPrivateKey key, Source source, Optional<Path> file) {}

  /**
   * Loads the wallet key.
   *
   * @param keyFile an explicit key file, or null
   * @param environment the process environment ({@value #ENV})
   * @param deploymentsDir where the default key is stored or generated
   * @throws IllegalArgumentException when a key is malformed (the message names the source, not
   *     the key)
   * @throws IOException when a file cannot be read or written
   */
  public static Loaded load(final Path keyFile, final Map<String, String> environment,
      final Path deploymentsDir, final SecureRandom random) throws IOException {
    if (keyFile != null) {
      return new Loaded(parse(Files.readString(keyFile, StandardCharsets.UTF_8), keyFile
          .toString()), Source.FILE, Optional.of(keyFile));
    }
    final String fromEnv = environment.get(ENV);
    if (fromEnv != null && !fromEnv.isBlank()) {
      return new Loaded(parse(fromEnv, ENV), Source.ENVIRONMENT, Optional.empty());
    }
    final Path file = deploymentsDir.resolve(DEFAULT_FILE);
    if (Files.exists(file)) {
      return new Loaded(parse(Files.readString(file, StandardCharsets.UTF_8), file.toString()),
          Source.STORED, Optional.of(file));
    }
    final EthPrivateKey key = EthPrivateKey.generate(random);
    // One shared helper (SecretFile): mode 0600, fsynced temporary file, hard link, directory
    // fsync. A crash leaves no key or a complete one, never an empty file; a second deploy racing
    // this one links first or reads the winner's key.
    if (!SecretFile.createIfAbsent(file, (key.toHex() + "\n").getBytes(
        StandardCharsets.US_ASCII))) {
      return new Loaded(parse(Files.readString(file, StandardCharsets.UTF_8), file.toString()),
          Source.STORED, Optional.of(file));
    }
    return new Loaded(key, Source.GENERATED, Optional.of(file));
  }

  private static EthPrivateKey parse(final String text, final String where) {
    try {
      return EthPrivateKey.parse(text.strip());
    } catch (final WalletFormatException e) {
      throw new IllegalArgumentException(where + ": not a wallet key (0x + 64 hex digits): "
          + e.getMessage());
    }
  }

  /**
   * The publisher key derived from the wallet key for {@code profile} (notes/handoff.md 6.2):
   * {@code k = (HMAC-SHA256(wallet key bytes, "le-space/bootstrap-publisher/v1:" + profile) mod
   * (n - 1)) + 1}. Deterministic: the same wallet and profile always give the same key, so the
   * publisher address survives redeployments, and anyone holding it can publish as every relay of
   * this wallet and profile.
   */
  public static EthPrivateKey derivePublisherKey(final EthPrivateKey wallet,
      final String profile) {
    try {
      final Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(wallet.toBytes(), "HmacSHA256"));
      final byte[] digest = mac.doFinal(
          (PUBLISHER_LABEL_PREFIX + profile).getBytes(StandardCharsets.UTF_8));
      final BigInteger k = new BigInteger(1, digest).mod(N.subtract(BigInteger.ONE))
          .add(BigInteger.ONE);
      final String hex = k.toString(16);
      return EthPrivateKey.parse("0x" + "0".repeat(64 - hex.length()) + hex);
    } catch (final NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("the JDK has no HmacSHA256", e);
    }
  }
}
