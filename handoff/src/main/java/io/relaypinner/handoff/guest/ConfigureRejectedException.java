package io.relaypinner.handoff.guest;

/**
 * A configuration the guest refuses (the deployer's fault): answered 400 (or 409 when the guest is
 * already configured) with {@link #code()} and the message, and nothing is written.
 */
public final class ConfigureRejectedException extends Exception {
  private static final long serialVersionUID = 1L;

  private final String code;

  public ConfigureRejectedException(final String code, final String message) {
    super(message);
    this.code = code;
  }

  /** The snake_case error code of the JSON error. */
  public String code() {
    return code;
  }
}
