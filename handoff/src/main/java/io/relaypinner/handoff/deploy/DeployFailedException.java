package io.relaypinner.handoff.deploy;

import java.util.List;

/**
 * A deployment that did not produce a relay. {@link #code()} says why:
 * {@code mixed_content} (push from an HTTPS origin: refused before any host was created),
 * {@code no_compatible_host}, {@code all_hosts_failed} (every attempt's reason is in
 * {@link #attempts()}).
 */
public final class DeployFailedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Push from an HTTPS origin. */
  public static final String MIXED_CONTENT = "mixed_content";
  /** The provider offered no host for the image. */
  public static final String NO_COMPATIBLE_HOST = "no_compatible_host";
  /** Every candidate failed. */
  public static final String ALL_HOSTS_FAILED = "all_hosts_failed";

  private final String code;
  private final transient DeployResult result;

  public DeployFailedException(final String code, final String message,
      final DeployResult result) {
    super(message);
    this.code = code;
    this.result = result;
  }

  public String code() {
    return code;
  }

  /** The failed result (attempts with their reasons). */
  public DeployResult result() {
    return result;
  }

  public List<AttemptResult> attempts() {
    return result.attempts();
  }
}
