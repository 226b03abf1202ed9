package io.relaypinner.multiformats;

import io.relaypinner.testkit.TestVectors;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;

/** Small helpers for reading the committed conformance vectors. */
final class TestData {
  private TestData() {}

  static byte[] hex(final String hex) {
    final String h = hex.startsWith("0x") ? hex.substring(2) : hex;
    return HexFormat.of().parseHex(h);
  }

  static String hex(final byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  static byte[] ascii(final String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }

  /** The lines of a file under {@code src/test/resources/vectors/}. */
  static List<String> lines(final String relative) {
    return readLines(TestVectors.path(relative));
  }

  static List<String> readLines(final Path path) {
    try {
      return Files.readAllLines(path, StandardCharsets.UTF_8);
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static byte[] read(final Path path) {
    try {
      return Files.readAllBytes(path);
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Splits {@code name, "value"} into the trimmed name and the unquoted value. */
  static String[] nameAndQuoted(final String line) {
    final int comma = line.indexOf(',');
    final String name = line.substring(0, comma).trim();
    String value = line.substring(comma + 1).trim();
    if (value.startsWith("\"") && value.endsWith("\"")) {
      value = value.substring(1, value.length() - 1);
    }
    return new String[] {name, value};
  }

  /** Resolves {@code \xNN} escapes, as used in the multibase test inputs. */
  static byte[] unescape(final String text) {
    final StringBuilder sb = new StringBuilder();
    for (int i = 0; i < text.length(); i++) {
      if (text.startsWith("\\x", i)) {
        sb.append((char) Integer.parseInt(text.substring(i + 2, i + 4), 16));
        i += 3;
      } else {
        sb.append(text.charAt(i));
      }
    }
    return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
  }
}
