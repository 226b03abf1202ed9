package io.relaypinner.testkit;

/**
 * The rule every fuzz target checks: a decoder given hostile bytes either accepts them (and then
 * the target checks what it returned, usually a canonical round trip) or refuses them with its
 * documented exception. Anything else thrown, an {@link AssertionError} from the target's own
 * checks included, escapes and is a finding.
 */
public final class FuzzCheck {
  /** A call that may throw anything. */
  @FunctionalInterface
  public interface Call {
    void run() throws Exception;
  }

  private FuzzCheck() {}

  /**
   * Runs {@code call}.
   *
   * @param refusals the exception types that mean "input refused"
   * @return whether the input was accepted
   * @throws Exception any other exception of {@code call}, unchanged
   */
  @SafeVarargs
  public static boolean accepts(final Call call, final Class<? extends Throwable>... refusals)
      throws Exception {
    try {
      call.run();
      return true;
    } catch (final Exception e) {
      for (final Class<? extends Throwable> refusal : refusals) {
        if (refusal.isInstance(e)) {
          if (e.getMessage() == null || e.getMessage().isBlank()) {
            throw new AssertionError("refused without a message", e);
          }
          return false;
        }
      }
      throw e;
    }
  }
}
