package io.relaypinner.relay.config;

import java.util.Locale;

/** How log lines are written ({@code LOG_FORMAT}); the CLI applies it to the logging backend. */
public enum LogFormat {
  /** Human-readable lines. */
  TEXT,
  /** One JSON object per line. */
  JSON;

  static LogFormat parse(final String variable, final String text) {
    for (final LogFormat format : values()) {
      if (format.name().equalsIgnoreCase(text)) {
        return format;
      }
    }
    throw InvalidConfigException.badValue(variable, text, "text or json");
  }

  /** The spelling used in the environment, e.g. {@code text}. */
  public String value() {
    return name().toLowerCase(Locale.ROOT);
  }
}
