package io.relaypinner.relay.ui;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.AsciiString;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code GET /dashboard}: the read-only status page, one self-contained HTML document (its script
 * and style inline, no other asset) that polls the JSON routes. Served with a strict
 * Content-Security-Policy: nothing but the page's own inline script and style (allowed by their
 * SHA-256), requests only to its own origin, no framing, no forms.
 */
public final class DashboardPage implements RouteHandler {
  private static final AsciiString TEXT_HTML = AsciiString.cached("text/html; charset=utf-8");
  private static final String RESOURCE = "dashboard.html";

  private final byte[] html;
  private final String csp;

  public DashboardPage() {
    this(load(RESOURCE));
  }

  DashboardPage(final String page) {
    this.html = page.getBytes(StandardCharsets.UTF_8);
    this.csp = "default-src 'none'; script-src " + hashes(page, "script") + "; style-src "
        + hashes(page, "style") + "; connect-src 'self'; img-src 'self' data:; base-uri 'none';"
        + " form-action 'none'; frame-ancestors 'none'";
  }

  /** The Content-Security-Policy header value. */
  public String contentSecurityPolicy() {
    return csp;
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    final FullHttpResponse response = HttpResponses.bytes(HttpResponseStatus.OK, TEXT_HTML, html);
    response.headers()
        .set("Content-Security-Policy", csp)
        .set("X-Content-Type-Options", "nosniff")
        .set("Referrer-Policy", "no-referrer")
        .set("X-Frame-Options", "DENY")
        .set(HttpHeaderNames.CACHE_CONTROL, "no-store");
    return CompletableFuture.completedFuture(response);
  }

  /** The CSP source list allowing every inline {@code <tag>} element of {@code page}. */
  static String hashes(final String page, final String tag) {
    final Matcher m = Pattern.compile("<" + tag + ">(.*?)</" + tag + ">", Pattern.DOTALL)
        .matcher(page);
    final StringBuilder out = new StringBuilder();
    while (m.find()) {
      if (!out.isEmpty()) {
        out.append(' ');
      }
      out.append("'sha256-").append(Base64.getEncoder().encodeToString(
          sha256(m.group(1).getBytes(StandardCharsets.UTF_8)))).append('\'');
    }
    return out.isEmpty() ? "'none'" : out.toString();
  }

  private static byte[] sha256(final byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String load(final String name) {
    try (InputStream in = DashboardPage.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
