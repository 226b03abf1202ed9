package io.relaypinner.libp2p.host;

import io.relaypinner.common.budget.KeyedScopes;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import java.net.InetAddress;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Where a {@link Host}'s transport connections are admitted from: a connection, half-open (still
 * in its handshake) included, holds one {@link Resource#CONNECTIONS} of its remote IP key's scope
 * (and so of {@code transport} and the scopes above it) from accept to close. An accepted channel
 * beyond either cap is closed before a byte is read. A node passes its budget's libp2p scope and
 * per-IP scopes ({@link HostConfig.Builder#connectionBudget}); a host without one gets
 * {@link #standalone} from {@link ConnectionLimits#maxConnections()}, with no per-IP cap.
 *
 * @param transport connections of this host in all; the parent of {@code ips}' scopes
 * @param ips one scope per IP key, children of {@code transport}; null: no per-IP cap
 * @param ipKey how a remote address becomes its key in {@code ips} (IPv4 /32, IPv6 /64)
 * @param perIpExempt remote addresses taken from {@code transport} only, not capped per IP: the
 *     operator's trusted reverse proxies, which carry many clients on one address
 */
public record ConnectionBudget(Scope transport, KeyedScopes ips,
    Function<InetAddress, String> ipKey, Predicate<InetAddress> perIpExempt) {

  public ConnectionBudget {
    Objects.requireNonNull(transport, "transport");
    Objects.requireNonNull(ipKey, "ipKey");
    Objects.requireNonNull(perIpExempt, "perIpExempt");
  }

  /** A budget of its own: {@code maxConnections} in all, nothing per IP (tests, tools). */
  public static ConnectionBudget standalone(final int maxConnections) {
    return new ConnectionBudget(Scope.root("libp2p", Limits.NONE.with(Resource.CONNECTIONS,
        maxConnections), LimitListener.NONE), null, InetAddress::getHostAddress, a -> true);
  }

  /** Whether connections from {@code address} are capped per IP key. */
  boolean capsPerIp(final InetAddress address) {
    return ips != null && address != null && !perIpExempt.test(address);
  }
}
