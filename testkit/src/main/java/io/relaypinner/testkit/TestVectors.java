package io.relaypinner.testkit;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;

/**
 * Locates the conformance data committed in a module's {@code src/test/resources/vectors/} (copied
 * from upstream with its licence files; see the {@code README.md} there). The data is part of the
 * clone, so a missing file is a build error, never a skipped test.
 */
public final class TestVectors {
  private TestVectors() {}

  /**
   * Returns the path of {@code vectors/relative} on the test class path.
   *
   * @param relative a file or folder under {@code vectors/}, e.g. {@code "multibase/basic.csv"}
   * @throws IllegalStateException when it is not on the class path
   */
  public static Path path(final String relative) {
    final String name = "vectors/" + relative;
    final URL url = Thread.currentThread().getContextClassLoader().getResource(name);
    if (url == null || !"file".equals(url.getProtocol())) {
      throw new IllegalStateException(
          "test resource " + name + " not found in src/test/resources (or not a file): " + url);
    }
    try {
      return Path.of(url.toURI());
    } catch (final URISyntaxException e) {
      throw new IllegalStateException("bad resource URL " + url, e);
    }
  }
}
