package io.relaypinner.handoff.deploy;

/** A failed deployment attempt; the message is the reason reported. */
final class AttemptFailed extends Exception {
  private static final long serialVersionUID = 1L;

  AttemptFailed(final String message) {
    super(message);
  }
}
