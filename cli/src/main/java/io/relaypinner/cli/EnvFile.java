package io.relaypinner.cli;

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
 * Reads {@code KEY=VALUE} files for {@code run --env-file} (the guest writes its {@code relay.env}
 * in this form).
 *
 * <p>Rules: blank lines and lines starting with {@code #} are skipped; an optional {@code export }
 * prefix is allowed; the value is everything after the first {@code =}, trimmed; one pair of
 * matching single or double quotes around the value is removed (no escapes, no variable
 * expansion, no inline comments: a {@code #} inside a value is part of it). A later line for the
 * same key wins.
 */
public final class EnvFile {
  /** An env file larger than this is refused: it cannot be a configuration. */
  public static final long MAX_SIZE = 1 << 20;

  private static final Pattern KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  private EnvFile() {}

  /** Thrown for a missing, unreadable, oversized or malformed file; says where. */
  public static final class EnvFileException extends Exception {
    private static final long serialVersionUID = 1L;

    EnvFileException(final String message) {
      super(message);
    }
  }

  /** Parses {@code file}. */
  public static Map<String, String> read(final Path file) throws EnvFileException {
    final List<String> lines;
    try {
      if (Files.size(file) > MAX_SIZE) {
        throw new EnvFileException(file + " is larger than " + MAX_SIZE + " bytes");
      }
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (final NoSuchFileException e) {
      throw new EnvFileException(file + " does not exist");
    } catch (final IOException e) {
      throw new EnvFileException("cannot read " + file + ": " + e.getMessage());
    }
    return parse(lines, file.toString());
  }

  static Map<String, String> parse(final List<String> lines, final String source)
      throws EnvFileException {
    final Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      if (line.startsWith("export ")) {
        line = line.substring("export ".length()).stripLeading();
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

  /** The file's values overlaid by the process environment: the environment wins. */
  public static Map<String, String> overlay(
      final Map<String, String> file, final Map<String, String> environment) {
    final Map<String, String> merged = new LinkedHashMap<>(file);
    merged.putAll(environment);
    return merged;
  }
}
