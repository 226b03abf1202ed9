package io.relaypinner.relay.testing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for tests: every line is a
 * {@code # HELP}, a {@code # TYPE} or a sample {@code name{labels} value [timestamp]}; every
 * sample belongs to a family declared by a {@code # TYPE} line before it; label values are quoted
 * with only the three escapes the format allows. Anything else throws.
 */
public final class PrometheusTextParser {
  private static final String NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
  private static final Pattern HELP = Pattern.compile("# HELP (" + NAME + ") (.*)");
  private static final Pattern TYPE =
      Pattern.compile("# TYPE (" + NAME + ") (counter|gauge|histogram|summary|untyped)");
  private static final Pattern SAMPLE = Pattern.compile(
      "(" + NAME + ")(\\{(.*)\\})? (\\S+)( -?[0-9]+)?");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\\\n]|\\\\[\\\\\"n])*)\"");
  private static final List<String> SUFFIXES =
      List.of("_total", "_created", "_count", "_sum", "_bucket", "_info");

  /** One sample line. */
  public record Sample(String name, Map<String, String> labels, double value) {}

  /** The families with their type, and every sample in order. */
  public record Exposition(Map<String, String> types, List<Sample> samples) {
    public List<Sample> samples(final String name) {
      return samples.stream().filter(s -> s.name().equals(name)).toList();
    }
  }

  private PrometheusTextParser() {}

  public static Exposition parse(final String text) {
    if (!text.isEmpty() && !text.endsWith("\n")) {
      throw new IllegalArgumentException("exposition must end with a newline");
    }
    final Map<String, String> types = new LinkedHashMap<>();
    final List<Sample> samples = new ArrayList<>();
    int lineNumber = 0;
    for (final String line : text.split("\n")) {
      lineNumber++;
      if (line.isEmpty()) {
        throw new IllegalArgumentException("line " + lineNumber + ": empty line");
      }
      if (line.startsWith("#")) {
        final Matcher type = TYPE.matcher(line);
        if (type.matches()) {
          if (types.put(type.group(1), type.group(2)) != null) {
            throw new IllegalArgumentException("line " + lineNumber + ": second # TYPE");
          }
        } else if (!HELP.matcher(line).matches()) {
          throw new IllegalArgumentException("line " + lineNumber + ": bad comment: " + line);
        }
        continue;
      }
      final Matcher sample = SAMPLE.matcher(line);
      if (!sample.matches()) {
        throw new IllegalArgumentException("line " + lineNumber + ": not a sample: " + line);
      }
      final String name = sample.group(1);
      if (familyOf(name, types) == null) {
        throw new IllegalArgumentException("line " + lineNumber + ": no # TYPE for " + name);
      }
      samples.add(new Sample(name, labels(sample.group(3), lineNumber), value(sample.group(4),
          lineNumber)));
    }
    return new Exposition(types, samples);
  }

  private static String familyOf(final String name, final Map<String, String> types) {
    if (types.containsKey(name)) {
      return name;
    }
    for (final String suffix : SUFFIXES) {
      if (name.endsWith(suffix)) {
        final String base = name.substring(0, name.length() - suffix.length());
        if (types.containsKey(base)) {
          return base;
        }
      }
    }
    return null;
  }

  private static Map<String, String> labels(final String text, final int lineNumber) {
    final Map<String, String> labels = new HashMap<>();
    if (text == null || text.isEmpty()) {
      return labels;
    }
    final Matcher m = LABEL.matcher(text);
    int position = 0;
    while (position < text.length()) {
      if (!m.find(position) || m.start() != position) {
        throw new IllegalArgumentException("line " + lineNumber + ": bad labels: " + text);
      }
      labels.put(m.group(1), m.group(2));
      position = m.end();
      if (position < text.length()) {
        if (text.charAt(position) != ',') {
          throw new IllegalArgumentException("line " + lineNumber + ": bad labels: " + text);
        }
        position++;
      }
    }
    return labels;
  }

  private static double value(final String text, final int lineNumber) {
    switch (text) {
      case "+Inf":
        return Double.POSITIVE_INFINITY;
      case "-Inf":
        return Double.NEGATIVE_INFINITY;
      case "NaN":
        return Double.NaN;
      default:
        try {
          return Double.parseDouble(text);
        } catch (final NumberFormatException e) {
          throw new IllegalArgumentException("line " + lineNumber + ": bad value " + text, e);
        }
    }
  }
}
