package io.relaypinner.relay.config;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads strings from an environment map and turns them into typed values, failing with an
 * {@link InvalidConfigException} that names the variable actually read (an alias when the value
 * came from one). Values are trimmed; an empty value counts as unset.
 */
final class EnvReader {
  private static final Logger LOG = LoggerFactory.getLogger(EnvReader.class);
  private static final int MAX_DIGITS = 18;

  /** One raw value and the name it was read from. */
  record Value(String variable, String text) {}

  private final Map<String, String> env;

  EnvReader(final Map<String, String> env) {
    this.env = env;
  }

  /** The first of {@code names} that is set; later names are aliases of the first. */
  Optional<Value> get(final String primary, final String... aliases) {
    final Optional<Value> first = read(primary);
    for (final String alias : aliases) {
      final Optional<Value> other = read(alias);
      if (first.isPresent() && other.isPresent()
          && !other.get().text().equals(first.get().text())) {
        LOG.warn("{} and its alias {} are both set with different values; using {}",
            primary, alias, primary);
      }
      if (first.isEmpty() && other.isPresent()) {
        return other;
      }
    }
    return first;
  }

  private Optional<Value> read(final String name) {
    final String raw = env.get(name);
    if (raw == null) {
      return Optional.empty();
    }
    final String text = raw.strip();
    return text.isEmpty() ? Optional.empty() : Optional.of(new Value(name, text));
  }

  static boolean bool(final Value value) {
    switch (value.text().toLowerCase(Locale.ROOT)) {
      case "true":
      case "1":
      case "yes":
      case "on":
        return true;
      case "false":
      case "0":
      case "no":
      case "off":
        return false;
      default:
        throw InvalidConfigException.badValue(value.variable(), value.text(),
            "a boolean (true/false, 1/0, yes/no, on/off)");
    }
  }

  /** Whether the value is one of the boolean false spellings (false/0/no/off, any case). */
  static boolean isFalse(final Value value) {
    return switch (value.text().toLowerCase(Locale.ROOT)) {
      case "false", "0", "no", "off" -> true;
      default -> false;
    };
  }

  /** An http(s) URL with a host. */
  static java.net.URI url(final Value value) {
    final java.net.URI uri;
    try {
      uri = new java.net.URI(value.text());
    } catch (final java.net.URISyntaxException e) {
      throw InvalidConfigException.badValue(value.variable(), value.text(),
          "an http(s) URL with a host");
    }
    return TlsConfig.checkUrl(value.variable(), uri);
  }

  static long integer(final Value value, final long min, final long max, final String expected) {
    final String text = value.text();
    if (text.length() > MAX_DIGITS || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw InvalidConfigException.badValue(value.variable(), text, expected);
    }
    final long parsed = Long.parseLong(text);
    if (parsed < min || parsed > max) {
      throw InvalidConfigException.badValue(value.variable(), text, expected);
    }
    return parsed;
  }

  static int port(final Value value) {
    return (int) integer(value, 0, 65_535, Checks.PORT);
  }

  static int publicPort(final Value value) {
    return (int) integer(value, 1, 65_535, Checks.PUBLIC_PORT);
  }

  static Duration millis(final Value value, final long minMs, final long maxMs) {
    return Duration.ofMillis(
        integer(value, minMs, maxMs, Checks.millisExpectation(minMs, maxMs)));
  }

  static Path path(final Value value) {
    try {
      return Path.of(value.text());
    } catch (final InvalidPathException e) {
      throw InvalidConfigException.badValue(value.variable(), value.text(), "a file system path");
    }
  }

  /** Comma-separated, items trimmed, empty items dropped; an empty result counts as unset. */
  static Optional<List<String>> list(final Optional<Value> value) {
    if (value.isEmpty()) {
      return Optional.empty();
    }
    final List<String> items = new ArrayList<>();
    for (final String item : value.get().text().split(",")) {
      final String trimmed = item.strip();
      if (!trimmed.isEmpty()) {
        items.add(trimmed);
      }
    }
    return items.isEmpty() ? Optional.empty() : Optional.of(List.copyOf(items));
  }
}
