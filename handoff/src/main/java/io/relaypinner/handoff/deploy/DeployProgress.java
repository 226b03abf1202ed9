package io.relaypinner.handoff.deploy;

/**
 * Receives the controller's progress events (notes/handoff.md 8): a stage name
 * ({@code validating}, {@code selecting-host}, {@code creating-host},
 * {@code waiting-for-setup-endpoint}, {@code reading-metadata}, {@code configuring},
 * {@code publishing-config}, {@code waiting-for-acknowledgement}, {@code authorizing},
 * {@code verifying-relay}, {@code waiting-for-registration}, {@code cleaning-up},
 * {@code completed}, {@code error}), a human detail and a 0-100 percentage within the current
 * attempt. Called on the deploying thread; must not block.
 */
@FunctionalInterface
public interface DeployProgress {
  /** Ignores every event. */
  DeployProgress NONE = (stage, detail, percent) -> { };

  void event(String stage, String detail, int percent);
}
