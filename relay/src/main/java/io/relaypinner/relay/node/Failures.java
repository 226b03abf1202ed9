package io.relaypinner.relay.node;

/** How the node's wiring reports a failure in a log line. */
final class Failures {
  private Failures() {}

  /** The innermost cause's message (its class when it has none). */
  static String rootMessage(final Throwable error) {
    Throwable cause = error;
    while (cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause.getMessage() != null ? cause.getMessage() : cause.toString();
  }
}
