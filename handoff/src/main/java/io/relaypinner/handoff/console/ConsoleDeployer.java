package io.relaypinner.handoff.console;

import io.relaypinner.handoff.deploy.DeployProgress;
import io.relaypinner.handoff.deploy.DeployResult;
import io.relaypinner.handoff.deploy.HandoffMode;
import java.net.URI;
import java.util.Optional;

/**
 * Runs one deployment for the console: the CLI builds the controller (provider, records, wallet)
 * as {@code relay-pinner deploy} does, with the page's origin and chosen handoff.
 */
@FunctionalInterface
public interface ConsoleDeployer {
  /**
   * @param handoff the handoff the operator chose, or empty for the manifest's
   * @param origin the origin of the page that asked (https:// refuses push up front)
   * @return the result; a failed deployment throws
   *     {@link io.relaypinner.handoff.deploy.DeployFailedException}
   */
  DeployResult deploy(Optional<HandoffMode> handoff, URI origin, DeployProgress progress)
      throws Exception;
}
