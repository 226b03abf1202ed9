package io.relaypinner.handoff.guest;

import io.relaypinner.handoff.deploy.DeployWallet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Map;

/**
 * Test fixture run as a child JVM by {@link SecretKeyCrashTest}, which kills it with SIGKILL
 * while it writes keys as fast as it can, printing one line after each write returned:
 *
 * <ul>
 *   <li>{@code wallet DIR}: {@code DeployWallet.load} generates {@code DIR/<n>/wallet.key} for
 *       n = 0, 1, …, printing {@code done <n> <address>};
 *   <li>{@code publisher DIR}: {@code PublisherKey.loadOrCreate} creates
 *       {@code DIR/<n>/publisher.key}, printing {@code done <n> <address>};
 *   <li>{@code replace DIR}: replaces {@code DIR/publisher.key} with a new key again and again
 *       (what a configuration supplying a key does), printing {@code next <address>} before and
 *       {@code done <address>} after each replacement.
 * </ul>
 */
public final class SecretKeyCrashWriter {
  private SecretKeyCrashWriter() {}

  /** Args: the mode and the directory. */
  public static void main(final String[] args) throws Exception {
    final Path dir = Path.of(args[1]);
    final SecureRandom random = new SecureRandom();
    switch (args[0]) {
      case "wallet" -> {
        for (int n = 0; ; n++) {
          final DeployWallet.Loaded loaded =
              DeployWallet.load(null, Map.of(), dir.resolve(Integer.toString(n)), random);
          print("done " + n + " " + loaded.key().address());
        }
      }
      case "publisher" -> {
        for (int n = 0; ; n++) {
          final PublisherKey.Loaded loaded = PublisherKey.loadOrCreate(
              dir.resolve(Integer.toString(n)).resolve("publisher.key"), random);
          print("done " + n + " " + loaded.key().address());
        }
      }
      case "replace" -> {
        final Path file = dir.resolve("publisher.key");
        Files.createDirectories(dir);
        while (true) {
          final PublisherKey next = PublisherKey.generate(random);
          print("next " + next.address());
          PublisherKey.replace(file, next);
          print("done " + next.address());
        }
      }
      default -> throw new IllegalArgumentException(args[0]);
    }
  }

  private static synchronized void print(final String line) {
    System.out.println(line);
    System.out.flush();
  }
}
