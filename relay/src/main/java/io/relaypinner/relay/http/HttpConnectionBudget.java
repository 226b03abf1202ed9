package io.relaypinner.relay.http;

import io.netty.channel.Channel;
import io.relaypinner.common.budget.KeyedScopes;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Reservation;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the HTTP listeners' connections come from (the node budget's {@code http} scope and its
 * per-IP scopes): an accepted connection holds one {@link Resource#CONNECTIONS} of its remote IP
 * key's scope, and so of {@code total}, from accept to close, TLS handshake and idle keep-alive
 * included. Beyond either cap it is closed at accept, before a byte is read (cheaper than
 * reading a request to answer 503); the budget counts the refusal
 * ({@code relay_resource_limit_hits_total{scope="http_ip"|"http",resource="connections"}}).
 *
 * <p>A trusted reverse proxy ({@code perIpExempt}) is capped only in total: its connections
 * carry many clients. Its {@code X-Forwarded-For} is not used to key connections: one proxy
 * connection carries requests of many clients one after another, so a client's share of
 * connections is the proxy's to enforce; requests are keyed by it ({@link ClientAddresses}, the
 * one rule both use).
 */
public final class HttpConnectionBudget {
  private static final Logger LOG = LoggerFactory.getLogger(HttpConnectionBudget.class);

  /** No cap (embedders and tests that bring none). */
  public static final HttpConnectionBudget UNLIMITED = new HttpConnectionBudget(
      Scope.root("http", Limits.NONE, LimitListener.NONE), null, ClientAddresses.DIRECT);

  private final Scope total;
  private final KeyedScopes ips;
  private final ClientAddresses clients;

  /**
   * @param total HTTP connections in all; the parent of {@code ips}' scopes
   * @param ips one scope per IP key; null: no per-IP cap
   * @param ipKey how a remote address becomes its key in {@code ips}
   * @param perIpExempt remote addresses capped only in total (trusted proxies)
   */
  public HttpConnectionBudget(final Scope total, final KeyedScopes ips,
      final Function<InetAddress, String> ipKey, final Predicate<InetAddress> perIpExempt) {
    this(total, ips, new ClientAddresses(perIpExempt, ipKey));
  }

  /**
   * @param total HTTP connections in all; the parent of {@code ips}' scopes
   * @param ips one scope per IP key; null: no per-IP cap
   * @param clients how a remote address becomes its key, and which are trusted proxies
   */
  public HttpConnectionBudget(final Scope total, final KeyedScopes ips,
      final ClientAddresses clients) {
    this.total = Objects.requireNonNull(total, "total");
    this.ips = ips;
    this.clients = Objects.requireNonNull(clients, "clients");
  }

  /** Who a client is: the rule of this budget's per-IP keys, for per-client scopes of routes. */
  public ClientAddresses clients() {
    return clients;
  }

  /**
   * Takes one connection for {@code channel} (given back when it closes), or closes it: false
   * when refused.
   */
  boolean admit(final Channel channel) {
    final InetAddress address = channel.remoteAddress() instanceof InetSocketAddress inet
        ? inet.getAddress() : null;
    final KeyedScopes.Handle ipScope;
    final Scope scope;
    final String key = address == null ? null : clients.connectionKey(address);
    if (ips != null && key != null) {
      ipScope = ips.open(key);
      if (ipScope == null) {
        return refuse(channel);
      }
      scope = ipScope.scope();
    } else {
      ipScope = null;
      scope = total;
    }
    final Reservation held = scope.reserve(Resource.CONNECTIONS, 1);
    if (held == null) {
      if (ipScope != null) {
        ipScope.close();
      }
      return refuse(channel);
    }
    channel.closeFuture().addListener(f -> {
      held.close();
      if (ipScope != null) {
        ipScope.close();
      }
    });
    return true;
  }

  private static boolean refuse(final Channel channel) {
    LOG.debug("refusing HTTP connection from {}: connection limit", channel.remoteAddress());
    channel.close();
    return false;
  }
}
