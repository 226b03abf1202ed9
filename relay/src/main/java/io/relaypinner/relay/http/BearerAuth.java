package io.relaypinner.relay.http;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The one bearer-token check of the HTTP API (RFC 6750 {@code Authorization: Bearer <token>}):
 * {@code RELAY_API_TOKEN} for {@code POST /pinning/sync} and {@code POST /pinning/import}, and
 * {@code RELAY_PINNING_SERVICE_TOKENS} for {@code /pins}.
 *
 * <p>The scheme is matched case-insensitively and the token is trimmed. Tokens are compared with
 * {@link MessageDigest#isEqual} against every accepted token, so the time taken says nothing
 * about how much of a guess was right nor which token it was close to.
 */
public final class BearerAuth {
  private static final String SCHEME = "Bearer ";

  private final List<byte[]> tokens;
  private final boolean openWithoutTokens;

  private BearerAuth(final List<String> tokens, final boolean openWithoutTokens) {
    this.tokens = tokens.stream().map(t -> t.getBytes(StandardCharsets.UTF_8)).toList();
    this.openWithoutTokens = openWithoutTokens;
  }

  /**
   * {@code RELAY_API_TOKEN}: when unset every request passes (the operator chose an open
   * relay); when set, requests must carry it.
   */
  public static BearerAuth apiToken(final Optional<String> token) {
    return new BearerAuth(token.stream().toList(), true);
  }

  /** Requests must carry one of {@code tokens}; none: every request is refused. */
  public static BearerAuth anyOf(final List<String> tokens) {
    return new BearerAuth(List.copyOf(tokens), false);
  }

  /** Whether any token is configured. */
  public boolean hasTokens() {
    return !tokens.isEmpty();
  }

  /** Whether a request with {@code authorization} (the header, or null) may pass. */
  public boolean permits(final String authorization) {
    return tokens.isEmpty() ? openWithoutTokens : token(authorization).isPresent();
  }

  /**
   * The token {@code authorization} presents (trimmed), when it is one of the accepted ones;
   * empty when the header is missing, not a bearer credential, or names no accepted token.
   */
  public Optional<String> token(final String authorization) {
    if (authorization == null || tokens.isEmpty()
        || authorization.length() <= SCHEME.length()
        || !authorization.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
      return Optional.empty();
    }
    final String presented = authorization.substring(SCHEME.length()).trim();
    final byte[] bytes = presented.getBytes(StandardCharsets.UTF_8);
    boolean accepted = false;
    for (final byte[] token : tokens) {
      // No early exit: every token is compared, whichever matches.
      accepted |= MessageDigest.isEqual(token, bytes);
    }
    return accepted ? Optional.of(presented) : Optional.empty();
  }

  /**
   * The 401 answer of the {@code RELAY_API_TOKEN} routes: {@code unauthorized} in the relay's
   * JSON error shape, with the challenge.
   */
  public static FullHttpResponse apiTokenRequired(final HttpResponses responses) {
    return challenge(responses.error(HttpResponseStatus.UNAUTHORIZED, ErrorCodes.UNAUTHORIZED,
        "Authorization: Bearer <RELAY_API_TOKEN> required"));
  }

  /** Adds {@code WWW-Authenticate: Bearer} to a 401 answer (RFC 6750 section 3). */
  public static FullHttpResponse challenge(final FullHttpResponse unauthorized) {
    Objects.requireNonNull(unauthorized, "unauthorized").headers()
        .set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer");
    return unauthorized;
  }
}
