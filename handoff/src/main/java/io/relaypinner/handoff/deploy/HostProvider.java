package io.relaypinner.handoff.deploy;

import java.util.List;
import java.util.Optional;

/**
 * Where guests run: a pool of hosts (Aleph CRNs, a cloud, this machine) behind one interface. The
 * controller lists compatible hosts, creates one instance per attempt and erases the instances of
 * failed attempts.
 */
public interface HostProvider {
  /** The provider's name ({@code local}, …) as reported in results. */
  String name();

  /**
   * Hosts that can run {@code manifest}'s image, best first.
   *
   * @throws HostException when the provider cannot list hosts
   */
  List<HostCandidate> compatibleHosts(ImageManifest manifest);

  /**
   * Creates an instance on {@code request.host()}: the image's ports mapped, the SSH key line
   * authorized. Returns once the host reports its public address and port mapping (the guest may
   * still be booting).
   *
   * @throws HostException when the instance cannot be created (the provider has cleaned up)
   */
  HostInstance create(InstanceRequest request);

  /**
   * Whether the instance still runs: {@code Optional.of(false)} only when the provider knows it
   * is gone (its process exited, the host dropped it), so the controller can end the attempt
   * without waiting out its timeouts. Empty when the provider cannot tell (the default).
   */
  default Optional<Boolean> running(final String instanceId) {
    return Optional.empty();
  }

  /**
   * Stops and deletes an instance and everything the provider keeps for it. Erasing an unknown or
   * already erased instance succeeds.
   *
   * @throws HostException when the instance may still exist
   */
  void erase(String instanceId);
}
