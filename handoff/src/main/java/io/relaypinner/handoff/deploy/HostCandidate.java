package io.relaypinner.handoff.deploy;

import java.util.Objects;

/**
 * One host a provider offers.
 *
 * @param id the provider's id of the host (a CRN hash, {@code local-1}, …)
 * @param name a human name
 */
public record HostCandidate(String id, String name) {
  public HostCandidate {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
  }
}
