package io.relaypinner.orbitdb.identity.webauthn;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The relying parties whose passkey signatures this node accepts: the origins (as browsers write
 * them in {@code clientDataJSON.origin}) and the rpIds (whose SHA-256 the authenticator data
 * starts with). A relay serves known apps, so both are allowlists; there is no wildcard and no
 * setting that skips the checks.
 *
 * <p>{@code webauthn-varsig} identities and entries are refused while {@link #origins()} is
 * empty ({@link #DEFAULT}); {@code webauthn} (keystore) proofs bind their challenge to the
 * signing key and are checked against the lists only when they are set.
 *
 * @param origins allowed origins, {@code scheme://host[:port]}
 * @param rpIds allowed rpIds (host names); empty = the hosts of {@code origins}
 * @param requireUserVerification whether the authenticator's UV flag is required (UP always is)
 * @param requireLowS whether P-256 signatures must have S in the lower half of the group order
 *     (off by default: authenticators do not normalise S, so this refuses about half of real
 *     passkey signatures; for apps whose clients normalise, it makes signatures non-malleable)
 */
public record WebAuthnConfig(Set<String> origins, Set<String> rpIds,
    boolean requireUserVerification, boolean requireLowS) {
  /** No relying party: varsig writers are refused. UV required. */
  public static final WebAuthnConfig DEFAULT = new WebAuthnConfig(Set.of(), Set.of(), true);

  /** Most entries in one list. */
  public static final int MAX_ENTRIES = 64;

  private static final Pattern HOST = Pattern.compile(
      "(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*");

  /** Either half of S accepted (the default policy). */
  public WebAuthnConfig(final Set<String> origins, final Set<String> rpIds,
      final boolean requireUserVerification) {
    this(origins, rpIds, requireUserVerification, false);
  }

  public WebAuthnConfig {
    origins = Set.copyOf(origins);
    for (final String origin : origins) {
      checkOrigin(origin);
    }
    final Set<String> ids = new LinkedHashSet<>(rpIds);
    if (ids.isEmpty()) {
      for (final String origin : origins) {
        ids.add(URI.create(origin).getHost());
      }
    }
    rpIds = Set.copyOf(ids);
    if (origins.size() > MAX_ENTRIES || rpIds.size() > MAX_ENTRIES) {
      throw new IllegalArgumentException("at most " + MAX_ENTRIES + " origins and rpIds");
    }
    for (final String rpId : rpIds) {
      if (!HOST.matcher(rpId).matches()) {
        throw new IllegalArgumentException("rpId \"" + rpId + "\" is not a lower-case host name");
      }
    }
    if (origins.isEmpty() && !rpIds.isEmpty()) {
      throw new IllegalArgumentException("rpIds need origins too");
    }
  }

  /** Whether a relying party is configured (varsig proofs can be judged). */
  public boolean configured() {
    return !origins.isEmpty();
  }

  /** The allowlists, from comma-separated lists as operators write them. */
  public static WebAuthnConfig parse(final String origins, final String rpIds) {
    return new WebAuthnConfig(Set.copyOf(split(origins)), Set.copyOf(split(rpIds)), true);
  }

  private static List<String> split(final String list) {
    final List<String> out = new ArrayList<>();
    if (list == null) {
      return out;
    }
    for (final String part : list.split(",", -1)) {
      final String trimmed = part.trim();
      if (!trimmed.isEmpty()) {
        out.add(trimmed);
      }
    }
    return out;
  }

  private static void checkOrigin(final String origin) {
    final URI uri;
    try {
      uri = new URI(origin);
    } catch (final URISyntaxException e) {
      throw new IllegalArgumentException("origin \"" + origin + "\" is not a URL", e);
    }
    final String scheme = uri.getScheme();
    final String host = uri.getHost();
    if (scheme == null || host == null || uri.getRawUserInfo() != null
        || !(uri.getRawPath() == null || uri.getRawPath().isEmpty()) || uri.getRawQuery() != null
        || uri.getRawFragment() != null) {
      throw new IllegalArgumentException("origin \"" + origin
          + "\" must be scheme://host[:port] with nothing after");
    }
    if (!scheme.equals("https") && !(scheme.equals("http") && host.equals("localhost"))) {
      throw new IllegalArgumentException("origin \"" + origin
          + "\" must be https (browsers allow passkeys on http only for localhost)");
    }
    if (!origin.equals(origin.toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException("origin \"" + origin
          + "\" must be lower case, as browsers serialize it");
    }
  }
}
