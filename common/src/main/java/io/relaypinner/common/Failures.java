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
