package io.relaypinner.relay;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The relay's build version (spec 9), embedded at build time: Maven filters
 * {@code io/relaypinner/relay/version.properties} with {@code ${project.version}}. Read once.
 */
public final class RelayVersion {
  /** The version, e.g. {@code 0.1.0-SNAPSHOT}; {@code unknown} when run from unfiltered sources. */
  public static final String VERSION = load();

  private RelayVersion() {}

  private static String load() {
    try (InputStream in = RelayVersion.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        return "unknown";
      }
      final Properties properties = new Properties();
      properties.load(in);
      final String version = properties.getProperty("version", "").strip();
      // An IDE that copies resources without Maven's filtering leaves the placeholder in.
      return version.isEmpty() || version.startsWith("${") ? "unknown" : version;
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot read version.properties", e);
    }
  }
}
