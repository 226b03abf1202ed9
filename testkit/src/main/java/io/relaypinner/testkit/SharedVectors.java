package io.relaypinner.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * Locates the official conformance data in {@code shared/vectors} beside the clone (CI has it; a
 * user's clone may not). Tests that need it are skipped with a message naming the path, never
 * failed, when it is absent.
 */
public final class SharedVectors {
  /** System property set by surefire and failsafe (parent POM). */
  public static final String PROPERTY = "relaypinner.vectors.dir";

  private SharedVectors() {}

  /** The vectors root, whether or not it exists. */
  public static Path root() {
    final String configured = System.getProperty(PROPERTY);
    return Path.of(configured != null ? configured : "../shared/vectors").toAbsolutePath()
        .normalize();
  }

  /**
   * Returns {@code root()/relative}, skipping the calling test when it does not exist.
   *
   * @param relative a file or folder under the vectors root, e.g. {@code "multibase/basic.csv"}
   */
  public static Path require(final String relative) {
    final Path path = root().resolve(relative);
    Assumptions.assumeTrue(
        Files.exists(path),
        () -> "conformance vectors not found at " + path
            + " (shared/vectors beside the clone); skipping");
    return path;
  }
}
