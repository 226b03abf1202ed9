package io.relaypinner.relay.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import io.relaypinner.relay.config.CorsConfig;
import java.util.Set;

/**
 * The CORS headers of spec 5.1 and CONTRACT.md, applied to every response (errors included):
 *
 * <ul>
 *   <li>{@code METRICS_CORS_ORIGIN=*} (default): {@code Access-Control-Allow-Origin: *};
 *   <li>an allowlist: a request {@code Origin} equal to a listed origin is echoed; any other gets
 *       no {@code Access-Control-Allow-Origin}; both get {@code Vary: Origin} so caches keep the
 *       answers apart;
 *   <li>always {@code Access-Control-Allow-Methods: GET, POST, DELETE, OPTIONS, HEAD},
 *       {@code Access-Control-Allow-Headers} and {@code Access-Control-Max-Age}; browsers only
 *       read them on preflights, and sending them everywhere keeps one code path.
 * </ul>
 */
public final class CorsPolicy {
  private static final AsciiString ANY = AsciiString.cached("*");
  private static final AsciiString ORIGIN = AsciiString.cached("Origin");
  private static final AsciiString ALLOW_METHODS = AsciiString.cached("GET, POST, DELETE, OPTIONS, HEAD");

  private final boolean anyOrigin;
  private final Set<String> origins;
  private final AsciiString allowHeaders;
  private final AsciiString maxAge;

  public CorsPolicy(final CorsConfig config) {
    this.anyOrigin = config.anyOrigin();
    this.origins = Set.copyOf(config.allowedOrigins());
    this.allowHeaders = AsciiString.of(String.join(", ", config.allowHeaders()));
    this.maxAge = AsciiString.of(Long.toString(config.maxAgeSeconds()));
  }

  /** True when the answer does not depend on the request's {@code Origin}. */
  public boolean anyOrigin() {
    return anyOrigin;
  }

  /**
   * Adds the CORS headers for a request that carried {@code origin} ({@code null} when absent;
   * ignored when any origin is allowed).
   */
  public void apply(final HttpHeaders headers, final String origin) {
    if (anyOrigin) {
      headers.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, ANY);
    } else {
      headers.add(HttpHeaderNames.VARY, ORIGIN);
      if (origin != null && origins.contains(origin)) {
        headers.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, origin);
      }
    }
    headers.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_METHODS, ALLOW_METHODS)
        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_HEADERS, allowHeaders)
        .set(HttpHeaderNames.ACCESS_CONTROL_MAX_AGE, maxAge);
  }
}
