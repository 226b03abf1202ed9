package io.relaypinner.handoff.guest;

import java.nio.file.Path;

/**
 * Starts the relay in this process from a {@code relay.env} file. The handoff module knows nothing
 * of the relay's internals; the {@code cli} module implements this with the relay node (the
 * process environment overrides the file, as for {@code run --env-file}).
 */
@FunctionalInterface
public interface RelayLauncher {
  /**
   * Starts the relay and returns once its listeners are bound.
   *
   * @throws Exception when the configuration is refused or a listener cannot bind; the message
   *     says why (it is reported to the deployer)
   */
  RunningRelay start(Path envFile) throws Exception;
}
