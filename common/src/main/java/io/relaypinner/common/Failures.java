package io.relaypinner.common;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * How every module looks through a failure's wrappers: the one place for "which exception really
 * happened" and "what do we say about it in a log line".
 *
 * <p>Two different questions, two operations:
 *
 * <ul>
 *   <li>{@link #unwrap}: what a future failed with. {@link CompletionException} and {@link
 *       ExecutionException} only say "a future failed"; the exception they carry is the one its
 *       code threw, whose type callers test ({@code instanceof StorageFullException}) and whose
 *       message users see. Its own causes are kept: they are part of what it says.
 *   <li>{@link #rootCause}: the deepest cause, for a message that names what went wrong at the
 *       bottom (a refused connection under three layers of an SDK's wrappers).
 * </ul>
 *
 * <p>And one rule ({@link #isFatal}, {@link #rethrowIfFatal}): an {@link Error} is never a
 * request's or a peer's answer. A handler that turns failures into ordinary outcomes (a 404, an
 * empty list, a DEBUG line for a remote's fault) asks first, and passes on or logs at ERROR what
 * is fatal. A heap exhausted never gets that far: {@code -XX:+ExitOnOutOfMemoryError}
 * ({@code packaging/jvm.options}) ends the JVM where the error is thrown; what remains are the
 * errors the JVM survives (a {@link StackOverflowError}, a direct-memory
 * {@link OutOfMemoryError} thrown by library code) and our own bugs.
 *
 * <p>Cause chains are followed at most {@value #MAX_CHAIN} links: {@link Throwable#initCause}
 * allows a chain that loops, and a log line must not hang the thread writing it.
 */
public final class Failures {
  /** Links followed at most; a longer chain (or a loop) stops there. */
  static final int MAX_CHAIN = 64;

  private Failures() {}

  /**
   * {@code error} without its {@link CompletionException} and {@link ExecutionException}
   * wrappers: the first exception in the chain that is neither (or the last wrapper, when it has
   * no cause). Null for null.
   */
  public static Throwable unwrap(final Throwable error) {
    Throwable t = error;
    for (int links = 0; links < MAX_CHAIN && isWrapper(t) && t.getCause() != null; links++) {
      t = t.getCause();
    }
    return t;
  }

  private static boolean isWrapper(final Throwable t) {
    return t instanceof CompletionException || t instanceof ExecutionException;
  }

  /** The deepest cause of {@code error} ({@code error} itself when it has none). Null for null. */
  public static Throwable rootCause(final Throwable error) {
    Throwable t = error;
    for (int links = 0; t != null && links < MAX_CHAIN; links++) {
      final Throwable next = t.getCause();
      if (next == null || next == t) {
        break;
      }
      t = next;
    }
    return t;
  }

  /**
   * The first exception of {@code type} in {@code error}'s cause chain ({@code error} itself
   * included), or null.
   */
  public static <T extends Throwable> T find(final Throwable error, final Class<T> type) {
    Throwable t = error;
    for (int links = 0; t != null && links <= MAX_CHAIN; links++) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
      final Throwable next = t.getCause();
      t = next == t ? null : next;
    }
    return null;
  }

  /**
   * Whether {@code error} is the JVM's or our code's breakdown, never a request's or a peer's
   * fault: an {@link Error} under the future wrappers, or a {@link VirtualMachineError} anywhere
   * in its cause chain. False for null.
   */
  public static boolean isFatal(final Throwable error) {
    return unwrap(error) instanceof Error || find(error, VirtualMachineError.class) != null;
  }

  /**
   * Throws what makes {@code error} {@link #isFatal fatal} (the {@link Error} under the future
   * wrappers, else the {@link VirtualMachineError} in its chain); returns when it is not. For
   * {@code exceptionally}/{@code handle} callbacks that answer ordinary failures.
   */
  public static void rethrowIfFatal(final Throwable error) {
    if (unwrap(error) instanceof Error e) {
      throw e;
    }
    final VirtualMachineError vm = find(error, VirtualMachineError.class);
    if (vm != null) {
      throw vm;
    }
  }

  /** {@code error}'s own message, or its class's simple name when it has none. */
  public static String messageOf(final Throwable error) {
    final String message = error.getMessage();
    return message != null ? message : error.getClass().getSimpleName();
  }

  /** The deepest cause's message, or that cause's class's simple name when it has none. */
  public static String rootMessage(final Throwable error) {
    return messageOf(rootCause(error));
  }
}
