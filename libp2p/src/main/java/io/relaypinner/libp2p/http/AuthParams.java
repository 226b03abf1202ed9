package io.relaypinner.libp2p.http;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code libp2p-PeerID} auth-params of one {@code Authorization}, {@code WWW-Authenticate} or
 * {@code Authentication-Info} header (libp2p/specs http/peer-id-auth.md r1, RFC 9110 section
 * 11): {@code libp2p-PeerID name="value", name2="value2"}. Values are quoted strings (tokens are
 * accepted on input). Parsing is bounded: headers longer than {@link #MAX_HEADER_LENGTH} or with
 * more than {@link #MAX_PARAMS} parameters are refused before anything else is looked at.
 */
public final class AuthParams {
  public static final String SCHEME = "libp2p-PeerID";
  /** The spec's suggested limit for an authentication header. */
  public static final int MAX_HEADER_LENGTH = 2048;
  /** More parameters than any message of the protocol has. */
  public static final int MAX_PARAMS = 12;

  private final Map<String, String> params;

  private AuthParams(final Map<String, String> params) {
    this.params = Collections.unmodifiableMap(params);
  }

  public static AuthParams of(final Map<String, String> params) {
    return new AuthParams(new LinkedHashMap<>(params));
  }

  public Optional<String> get(final String name) {
    return Optional.ofNullable(params.get(name));
  }

  public Map<String, String> asMap() {
    return params;
  }

  /** {@code libp2p-PeerID a="x", b="y"} in insertion order. */
  public String format() {
    final StringBuilder out = new StringBuilder(SCHEME);
    String separator = " ";
    for (final Map.Entry<String, String> e : params.entrySet()) {
      out.append(separator).append(e.getKey()).append("=\"");
      for (final char c : e.getValue().toCharArray()) {
        if (c == '"' || c == '\\') {
          out.append('\\');
        }
        out.append(c);
      }
      out.append('"');
      separator = ", ";
    }
    return out.toString();
  }

  /**
   * Parses a header value; empty when it does not use the {@code libp2p-PeerID} scheme (another
   * scheme, e.g. {@code Bearer}, is not an error: it is just not ours).
   *
   * @throws PeerIdAuthException when it is ours but oversized or malformed
   */
  public static Optional<AuthParams> parse(final String header) throws PeerIdAuthException {
    if (header == null) {
      return Optional.empty();
    }
    if (header.length() > MAX_HEADER_LENGTH) {
      throw new PeerIdAuthException("authentication header longer than " + MAX_HEADER_LENGTH);
    }
    final String trimmed = header.strip();
    if (!trimmed.regionMatches(true, 0, SCHEME, 0, SCHEME.length())
        || (trimmed.length() > SCHEME.length() && trimmed.charAt(SCHEME.length()) != ' ')) {
      return Optional.empty();
    }
    final Map<String, String> out = new LinkedHashMap<>();
    int i = SCHEME.length();
    final int n = trimmed.length();
    while (true) {
      while (i < n && (trimmed.charAt(i) == ' ' || trimmed.charAt(i) == ',')) {
        i++;
      }
      if (i >= n) {
        break;
      }
      final int nameStart = i;
      while (i < n && isNameChar(trimmed.charAt(i))) {
        i++;
      }
      if (i == nameStart || i >= n || trimmed.charAt(i) != '=') {
        throw new PeerIdAuthException("malformed auth-param at offset " + nameStart);
      }
      final String name = trimmed.substring(nameStart, i).toLowerCase(java.util.Locale.ROOT);
      i++;
      final StringBuilder value = new StringBuilder();
      if (i < n && trimmed.charAt(i) == '"') {
        i++;
        boolean closed = false;
        while (i < n) {
          final char c = trimmed.charAt(i++);
          if (c == '\\' && i < n) {
            value.append(trimmed.charAt(i++));
          } else if (c == '"') {
            closed = true;
            break;
          } else {
            value.append(c);
          }
        }
        if (!closed) {
          throw new PeerIdAuthException("unterminated quoted value of " + name);
        }
      } else {
        while (i < n && isTokenChar(trimmed.charAt(i))) {
          value.append(trimmed.charAt(i++));
        }
      }
      if (out.putIfAbsent(name, value.toString()) != null) {
        throw new PeerIdAuthException("duplicate auth-param " + name);
      }
      if (out.size() > MAX_PARAMS) {
        throw new PeerIdAuthException("more than " + MAX_PARAMS + " auth-params");
      }
      while (i < n && trimmed.charAt(i) == ' ') {
        i++;
      }
      if (i < n && trimmed.charAt(i) != ',') {
        throw new PeerIdAuthException("expected ',' at offset " + i);
      }
    }
    return Optional.of(new AuthParams(out));
  }

  /** RFC 9110 tchar. */
  private static boolean isNameChar(final char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
  }

  /** An unquoted value: tchar plus '/' and '=' (token68-like base64). */
  private static boolean isTokenChar(final char c) {
    return isNameChar(c) || c == '/' || c == '=';
  }

  @Override
  public String toString() {
    return params.keySet().toString();
  }
}
