package io.relaypinner.relay.sync;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The last few problems an operator should see (failed and timed-out syncs, refused syncs), for
 * the status page. Bounded: at most {@link #MAX} kept, each message cut at {@link #MAX_CHARS}
 * characters; the oldest is forgotten first. Thread-safe.
 */
public final class RecentProblems {
  public static final int MAX = 50;
  public static final int MAX_CHARS = 300;

  /**
   * @param at when it happened
   * @param kind a short machine word: {@code sync_failed}, {@code sync_timeout},
   *     {@code sync_refused}
   * @param subject what it is about (a database address), or {@code null}
   * @param message the reason, cut at {@link #MAX_CHARS}
   */
  public record Problem(Instant at, String kind, String subject, String message) {}

  private final Clock clock;
  private final ArrayDeque<Problem> problems = new ArrayDeque<>();

  public RecentProblems(final Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  public void record(final String kind, final String subject, final String message) {
    final String text = message == null ? "" : message;
    final Problem problem = new Problem(clock.instant(), Objects.requireNonNull(kind, "kind"),
        subject, text.length() > MAX_CHARS ? text.substring(0, MAX_CHARS) + "…" : text);
    synchronized (problems) {
      if (problems.size() >= MAX) {
        problems.removeFirst();
      }
      problems.addLast(problem);
    }
  }

  /** Most recent first. */
  public List<Problem> list() {
    synchronized (problems) {
      final List<Problem> out = new ArrayList<>(problems);
      java.util.Collections.reverse(out);
      return out;
    }
  }
}
