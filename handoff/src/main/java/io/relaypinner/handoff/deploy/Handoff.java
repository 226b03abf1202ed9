package io.relaypinner.handoff.deploy;

import java.util.List;

/**
 * One handoff style (spec 3.2 push, 3.3 pull): how the instance's SSH key is prepared, how the
 * guest gets its deployment and its owner authorization, and what is left to clean up.
 */
interface Handoff {
  /** The SSH key line the instance is created with (pull: with the token locator). */
  String authorizedKey(String sshKey);

  /**
   * Hands the guest of {@code attempt} (its instance exists) its deployment.
   *
   * @throws AttemptFailed when the guest did not take it
   */
  HandoffGuest handOff(Attempt attempt) throws AttemptFailed, InterruptedException;

  /** The guest registered as expected: drop what the handoff published that is no longer needed. */
  void completed(String reason);

  /** The attempt failed: remove everything the handoff published. */
  void cleanUp(String reason);

  /** Item hashes of the deployer's records forgotten so far. */
  List<String> forgotten();

  /** What could not be cleaned up. */
  List<String> cleanupErrors();
}
