package io.relaypinner.relay.config;

import java.util.Map;
import java.util.Objects;

/**
 * Logging ({@code LOG_LEVEL}, {@code LOG_FORMAT}); read here so that a bad value fails at start,
 * applied by the CLI.
 *
 * @param loggerLevels levels of single logger categories (package names) over {@code level}, set
 *     by orbitdb-relay's logging switches ({@link JsRelayEnvironment}), e.g. {@code
 *     ENABLE_SYNC_LOGS=true} is {@code io.relaypinner.relay.sync} at DEBUG
 */
public record LoggingConfig(LogLevel level, LogFormat format, Map<String, LogLevel> loggerLevels) {
  public LoggingConfig {
    Objects.requireNonNull(level, "level");
    Objects.requireNonNull(format, "format");
    loggerLevels = Map.copyOf(loggerLevels);
  }

  /** Without levels of single categories. */
  public LoggingConfig(final LogLevel level, final LogFormat format) {
    this(level, format, Map.of());
  }
}
