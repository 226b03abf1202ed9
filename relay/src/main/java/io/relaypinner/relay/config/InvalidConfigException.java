package io.relaypinner.relay.config;

/**
 * A configuration value that cannot be used: the message names the variable, the bad value (never
 * for secrets) and what is expected, e.g. {@code METRICS_PORT: "abc" is not a port (0-65535)}.
 *
 * <p>The operator is to blame, not the code: the CLI maps this exception to exit code 2 and prints
 * the message without a stack trace (CONTRACT.md "Environment variables").
 */
public final class InvalidConfigException extends RuntimeException {
  private static final int MAX_ECHOED_VALUE = 120;

  private final String variable;

  /**
   * @param variable the environment variable (or option) at fault
   * @param message the whole message, starting with the variable's name
   */
  public InvalidConfigException(final String variable, final String message) {
    super(message);
    this.variable = variable;
  }

  /** The name of the environment variable at fault, e.g. {@code METRICS_PORT}. */
  public String variable() {
    return variable;
  }

  /** {@code VAR: "value" is not <expected>}. */
  static InvalidConfigException badValue(
      final String variable, final Object value, final String expected) {
    return new InvalidConfigException(
        variable, variable + ": " + quote(String.valueOf(value)) + " is not " + expected);
  }

  /** Like {@link #badValue} for secrets: the value is never echoed. */
  static InvalidConfigException badSecret(final String variable, final String expected) {
    return new InvalidConfigException(
        variable, variable + ": the value (not shown, it is a secret) is not " + expected);
  }

  /** Quotes a value for a message; control characters are escaped and long values cut. */
  private static String quote(final String value) {
    final String cut = value.length() > MAX_ECHOED_VALUE
        ? value.substring(0, MAX_ECHOED_VALUE) + "..."
        : value;
    final StringBuilder out = new StringBuilder(cut.length() + 2).append('"');
    for (int i = 0; i < cut.length(); i++) {
      final char c = cut.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20 || c == 0x7f) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }
}
