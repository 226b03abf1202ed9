package io.relaypinner.relay.config;

import java.util.Objects;

/**
 * Logging ({@code LOG_LEVEL}, {@code LOG_FORMAT}); read here so that a bad value fails at start,
 * applied by the CLI.
 */
public record LoggingConfig(LogLevel level, LogFormat format) {
  public LoggingConfig {
    Objects.requireNonNull(level, "level");
    Objects.requireNonNull(format, "format");
  }
}
