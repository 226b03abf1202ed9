package io.relaypinner.handoff.deploy;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * An instance a provider created.
 *
 * @param id the provider's instance id ({@link HostProvider#erase(String)} takes it)
 * @param itemHash a 64-hex identifier of the instance (the INSTANCE message hash on Aleph; a
 *     provider without one derives it), written into records as {@code instanceItemHash}
 * @param host the host it runs on
 * @param publicIpv4 the IPv4 address its mapped ports are reachable at from the deployer
 * @param publicIpv6 its public IPv6 address, if any
 * @param mappedPorts guest port to host mapping
 */
public record HostInstance(String id, String itemHash, HostCandidate host, String publicIpv4,
    Optional<String> publicIpv6, Map<Integer, PortMapping> mappedPorts) {
  public HostInstance {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(itemHash, "itemHash");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(publicIpv4, "publicIpv4");
    publicIpv6 = publicIpv6 == null ? Optional.empty() : publicIpv6;
    mappedPorts = Map.copyOf(new TreeMap<>(mappedPorts));
  }

  /** The host port of guest port {@code guestPort}, if mapped. */
  public Optional<Integer> hostPort(final int guestPort) {
    return Optional.ofNullable(mappedPorts.get(guestPort)).map(PortMapping::host);
  }

  /** The same instance with {@code guestPort} mapped elsewhere (fault drills, tests). */
  public HostInstance withMapping(final int guestPort, final PortMapping mapping) {
    final Map<Integer, PortMapping> ports = new TreeMap<>(mappedPorts);
    ports.put(guestPort, mapping);
    return new HostInstance(id, itemHash, host, publicIpv4, publicIpv6, ports);
  }
}
