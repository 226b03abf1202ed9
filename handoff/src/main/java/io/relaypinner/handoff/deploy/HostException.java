package io.relaypinner.handoff.deploy;

/** A host provider could not do what was asked (the provider's or the host's fault). */
public class HostException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public HostException(final String message) {
    super(message);
  }

  public HostException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
