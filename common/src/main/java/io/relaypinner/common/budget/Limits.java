package io.relaypinner.common.budget;

import java.util.Arrays;
import java.util.StringJoiner;

/**
 * The most a {@link Scope} may hold of each {@link Resource}; {@link #UNLIMITED} where a scope
 * leaves a resource to its parents. Immutable: {@link #with} returns a copy.
 */
public final class Limits {
  /** No limit of its own: the parents decide. */
  public static final long UNLIMITED = Long.MAX_VALUE;
  /** A scope that limits nothing itself. */
  public static final Limits NONE = new Limits(filled(UNLIMITED));

  private final long[] max;

  private Limits(final long[] max) {
    this.max = max;
  }

  private static long[] filled(final long value) {
    final long[] max = new long[Resource.values().length];
    Arrays.fill(max, value);
    return max;
  }

  /** These limits with {@code resource} limited to {@code max} (0 refuses every reservation). */
  public Limits with(final Resource resource, final long max) {
    if (max < 0) {
      throw new IllegalArgumentException(resource.label() + " limit must not be negative: " + max);
    }
    final long[] copy = this.max.clone();
    copy[resource.ordinal()] = max;
    return new Limits(copy);
  }

  /** The most of {@code resource}, or {@link #UNLIMITED}. */
  public long max(final Resource resource) {
    return max[resource.ordinal()];
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof Limits other && Arrays.equals(max, other.max);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(max);
  }

  @Override
  public String toString() {
    final StringJoiner out = new StringJoiner(", ", "{", "}");
    for (final Resource r : Resource.values()) {
      if (max(r) != UNLIMITED) {
        out.add(r.label() + "=" + max(r));
      }
    }
    return out.toString();
  }
}
