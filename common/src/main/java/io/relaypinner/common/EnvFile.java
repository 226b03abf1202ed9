package io.relaypinner.common;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The env-file format: {@code KEY=VALUE} lines, what {@code relay-pinner run --env-file} reads and
 * what the guest writes as {@code relay.env} (docs/cli.md, "Env file format"). One parser and the
 * one writer that matches it, so that what the guest writes is what the relay reads.
 *
 * <p>Reading: blank lines and lines starting with {@code #} are skipped; an optional
 * {@code export } prefix is allowed; the value is everything after the first {@code =}, trimmed;
 * one pair of matching single or double quotes around the value is removed (no escapes, no
 * variable expansion, no inline comments: a {@code #} inside a value is part of it). A later line
 * for the same key wins. <b>Any other line is refused</b> (a line without {@code =}, a name that
 * is not {@code [A-Za-z_][A-Za-z0-9_]*}), with the source and the line number: a file the relay
 * would half read is a configuration nobody meant.
 *
 * <p>Writing ({@link #format}): {@code KEY=value}, the value inside double quotes when it would
 * not read back as itself otherwise (white space at either end, or quotes around it), so every
 * value reads back exactly. A value with a line break (or that UTF-8 cannot carry) cannot be
 * written, since the format has no escapes: it is refused.
 */
public final class EnvFile {
  /** An env file larger than this is refused: it cannot be a configuration. */
  public static final long MAX_SIZE = 1 << 20;

  private static final Pattern KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final String EXPORT = "export ";

  private EnvFile() {}

  /** A missing, unreadable, oversized or malformed file; the message says where. */
  public static final class EnvFileException extends IOException {
    private static final long serialVersionUID = 1L;

    EnvFileException(final String message) {
      super(message);
    }
  }

  /** Reads and parses {@code file} (UTF-8). */
  public static Map<String, String> read(final Path file) throws EnvFileException {
    final List<String> lines;
    try {
      if (Files.size(file) > MAX_SIZE) {
        throw new EnvFileException(file + " is larger than " + MAX_SIZE + " bytes");
      }
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (final NoSuchFileException e) {
      throw new EnvFileException(file + " does not exist");
    } catch (final EnvFileException e) {
      throw e;
    } catch (final IOException e) {
      throw new EnvFileException("cannot read " + file + ": " + e.getMessage());
    }
    return parse(lines, file.toString());
  }

  /**
   * Parses the lines of an env file (split as {@link java.io.BufferedReader#readLine} does);
   * {@code source} names it in errors.
   */
  public static Map<String, String> parse(final List<String> lines, final String source)
      throws EnvFileException {
    final Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      if (line.startsWith(EXPORT)) {
        line = line.substring(EXPORT.length()).stripLeading();
      }
      final int eq = line.indexOf('=');
      if (eq <= 0) {
        throw new EnvFileException(source + " line " + (i + 1) + ": expected KEY=VALUE");
      }
      final String key = line.substring(0, eq).strip();
      if (!KEY.matcher(key).matches()) {
        throw new EnvFileException(
            source + " line " + (i + 1) + ": \"" + key + "\" is not a variable name");
      }
      values.put(key, unquote(line.substring(eq + 1).strip()));
    }
    return values;
  }

  private static String unquote(final String value) {
    if (value.length() >= 2) {
      final char first = value.charAt(0);
      if ((first == '"' || first == '\'') && value.charAt(value.length() - 1) == first) {
        return value.substring(1, value.length() - 1);
      }
    }
    return value;
  }

  /**
   * The text of an env file holding {@code values} (in their order), after {@code comment} as
   * {@code #} lines (one per line of it; empty: none). {@link #parse} reads it back as exactly
   * {@code values}.
   *
   * @throws IllegalArgumentException for a key that is not a variable name, or a value with a line
   *     break or a character UTF-8 cannot carry (naming the key, never the value: it may be a
   *     secret)
   */
  public static String format(final Map<String, String> values, final String comment) {
    final StringBuilder text = new StringBuilder();
    if (!comment.isEmpty()) {
      for (final String line : comment.split("\r\n|\r|\n")) {
        text.append("# ").append(line).append('\n');
      }
    }
    for (final Map.Entry<String, String> entry : values.entrySet()) {
      final String key = entry.getKey();
      final String value = entry.getValue();
      if (!KEY.matcher(key).matches()) {
        throw new IllegalArgumentException("not a variable name: \"" + key + "\"");
      }
      if (value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0) {
        throw new IllegalArgumentException("the value of " + key
            + " has a line break: an env file cannot hold it");
      }
      if (!StandardCharsets.UTF_8.newEncoder().canEncode(value)) {
        throw new IllegalArgumentException("the value of " + key + " is not valid Unicode");
      }
      text.append(key).append('=');
      if (unquote(value.strip()).equals(value)) {
        text.append(value);
      } else {
        // The reader strips white space outside the quotes and removes exactly one pair.
        text.append('"').append(value).append('"');
      }
      text.append('\n');
    }
    return text.toString();
  }

  /** The file's values overlaid by the process environment: the environment wins. */
  public static Map<String, String> overlay(
      final Map<String, String> file, final Map<String, String> environment) {
    final Map<String, String> merged = new LinkedHashMap<>(file);
    merged.putAll(environment);
    return merged;
  }
}
