package io.relaypinner.relay.http;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The one rule of who an HTTP client is, for the node budget's per-client scopes
 * (docs/hardening.md "The budget"): a connection's remote address, cut to its IP key, except
 * behind a reverse proxy the operator trusts ({@code RELAY_TRUSTED_PROXIES}).
 *
 * <ul>
 *   <li>A <b>connection</b> from a trusted proxy has no per-IP key (it carries many clients, one
 *       request after another): it is capped in total only ({@link HttpConnectionBudget}).
 *   <li>A <b>request</b> through trusted proxies is its {@code X-Forwarded-For} client: the
 *       list read from the right (the entry the nearest proxy appended), trusted proxies
 *       skipped, the first other address taken. Entries to its left are the client's own to
 *       write and never believed. A request from anyone else is its remote address, whatever
 *       it sends in {@code X-Forwarded-For}. An entry that is not a numeric address (a proxy
 *       that writes {@code unknown}, a DNS name, which is never resolved) stops the walk: the
 *       last trusted address is then the client, so such requests share the proxy's key.
 * </ul>
 */
public final class ClientAddresses {
  /** The header a reverse proxy appends the address it was connected from to. */
  public static final String X_FORWARDED_FOR = "X-Forwarded-For";

  /** No trusted proxy: every client is its remote address, its key the whole address. */
  public static final ClientAddresses DIRECT = new ClientAddresses(address -> false,
      InetAddress::getHostAddress);

  private final Predicate<InetAddress> trustedProxy;
  private final Function<InetAddress, String> ipKey;

  /**
   * @param trustedProxy whether an address is one of {@code RELAY_TRUSTED_PROXIES}
   * @param ipKey how an address becomes its IP key ({@code IpPrefix}: IPv4 /32, IPv6 /64)
   */
  public ClientAddresses(final Predicate<InetAddress> trustedProxy,
      final Function<InetAddress, String> ipKey) {
    this.trustedProxy = Objects.requireNonNull(trustedProxy, "trustedProxy");
    this.ipKey = Objects.requireNonNull(ipKey, "ipKey");
  }

  /** Whether {@code address} is a trusted proxy. */
  public boolean trusted(final InetAddress address) {
    return trustedProxy.test(address);
  }

  /** The IP key of {@code address}. */
  public String key(final InetAddress address) {
    return ipKey.apply(address);
  }

  /** The per-IP key of a connection from {@code remote}, or null: a trusted proxy's has none. */
  public String connectionKey(final InetAddress remote) {
    return trustedProxy.test(remote) ? null : ipKey.apply(remote);
  }

  /**
   * The client of a request that arrived from {@code remote} with {@code headers}: the remote
   * address, or behind trusted proxies the {@code X-Forwarded-For} client (see the class).
   */
  public InetAddress client(final InetAddress remote, final HttpHeaders headers) {
    InetAddress client = remote;
    if (!trustedProxy.test(remote)) {
      return client;
    }
    final List<String> values = headers.getAll(X_FORWARDED_FOR);
    for (int v = values.size() - 1; v >= 0; v--) {
      final String[] items = values.get(v).split(",");
      for (int i = items.length - 1; i >= 0; i--) {
        final InetAddress hop = parse(items[i].trim());
        if (hop == null) {
          return client;
        }
        client = hop;
        if (!trustedProxy.test(hop)) {
          return client;
        }
      }
    }
    return client;
  }

  /**
   * The per-client key of a request from {@code remote} (its {@link #client}'s IP key); a
   * remote that is not an IP socket address (an embedded channel) is its text.
   */
  public String requestKey(final SocketAddress remote, final HttpHeaders headers) {
    if (remote instanceof InetSocketAddress inet && inet.getAddress() != null) {
      return ipKey.apply(client(inet.getAddress(), headers));
    }
    return String.valueOf(remote);
  }

  /**
   * A numeric address as proxies write it ({@code 192.0.2.7}, {@code 2001:db8::1},
   * {@code [2001:db8::1]}, {@code 192.0.2.7:1234}, {@code [2001:db8::1]:1234}), or null. Never
   * a DNS lookup.
   */
  static InetAddress parse(final String item) {
    String text = item;
    if (text.startsWith("[")) {
      final int end = text.indexOf(']');
      if (end < 0) {
        return null;
      }
      text = text.substring(1, end);
    } else if (text.indexOf(':') >= 0 && text.indexOf(':') == text.lastIndexOf(':')) {
      // IPv4 with a port: IPv6 has more than one colon.
      text = text.substring(0, text.indexOf(':'));
    }
    final byte[] bytes = NetUtil.createByteArrayFromIpAddressString(text);
    if (bytes == null) {
      return null;
    }
    try {
      return InetAddress.getByAddress(bytes);
    } catch (final UnknownHostException e) {
      return null;
    }
  }
}
