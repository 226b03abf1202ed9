package io.relaypinner.relay.config;

import java.util.Locale;

/** The root log level ({@code LOG_LEVEL}); the CLI applies it to the logging backend. */
public enum LogLevel {
  TRACE, DEBUG, INFO, WARN, ERROR;

  static LogLevel parse(final String variable, final String text) {
    for (final LogLevel level : values()) {
      if (level.name().equalsIgnoreCase(text)) {
        return level;
      }
    }
    throw InvalidConfigException.badValue(variable, text, "trace, debug, info, warn or error");
  }

  /** The spelling used in the environment, e.g. {@code info}. */
  public String value() {
    return name().toLowerCase(Locale.ROOT);
  }
}
