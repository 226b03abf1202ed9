package io.relaypinner.ipfs.dagcbor;

/**
 * Hard limits for {@link DagCborDecoder}: DAG-CBOR ({@code ipld/ipld}
 * {@code specs/codecs/dag-cbor/spec.md}) sets none, so a decoder facing remote bytes needs its own.
 *
 * <ul>
 *   <li>{@code maxInputSize}: largest block accepted, default {@value #DEFAULT_MAX_INPUT_SIZE}
 *       bytes (2 MiB, the bitswap and Kubo block limit).
 *   <li>{@code maxDepth}: deepest nesting of lists and maps, default {@value #DEFAULT_MAX_DEPTH};
 *       the top-level list or map is depth 1. The decoder recurses, so this also bounds the stack.
 * </ul>
 *
 * <p>Collection and string lengths need no limit of their own: each declared length is checked
 * against the bytes left before anything is allocated (an item takes at least one byte, a map
 * entry two).
 */
public record DagCborLimits(int maxInputSize, int maxDepth) {
  /** Default {@link #maxInputSize()}. */
  public static final int DEFAULT_MAX_INPUT_SIZE = 2 * 1024 * 1024;

  /** Default {@link #maxDepth()}. */
  public static final int DEFAULT_MAX_DEPTH = 64;

  /**
   * Largest {@link #maxDepth()} allowed, since decoding and encoding recurse. Measured on a 1 MiB
   * thread stack: about 2,700 levels fit with cold (interpreted) code, but one test run overflowed
   * at 1,000 levels, so the ceiling keeps a margin of four.
   */
  public static final int MAX_DEPTH_CEILING = 256;

  /** The defaults. */
  public static final DagCborLimits DEFAULT =
      new DagCborLimits(DEFAULT_MAX_INPUT_SIZE, DEFAULT_MAX_DEPTH);

  /**
   * Validates.
   *
   * @throws IllegalArgumentException when a limit is not positive or the depth is above
   *     {@value #MAX_DEPTH_CEILING}
   */
  public DagCborLimits {
    if (maxInputSize < 1) {
      throw new IllegalArgumentException("maxInputSize must be positive: " + maxInputSize);
    }
    if (maxDepth < 1 || maxDepth > MAX_DEPTH_CEILING) {
      throw new IllegalArgumentException(
          "maxDepth must be in 1.." + MAX_DEPTH_CEILING + ": " + maxDepth);
    }
  }

  /** A builder starting from the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds {@link DagCborLimits}; validation happens in {@link #build()}. */
  public static final class Builder {
    private int maxInputSize = DEFAULT_MAX_INPUT_SIZE;
    private int maxDepth = DEFAULT_MAX_DEPTH;

    private Builder() {}

    /** Sets {@link DagCborLimits#maxInputSize()}. */
    public Builder maxInputSize(final int value) {
      this.maxInputSize = value;
      return this;
    }

    /** Sets {@link DagCborLimits#maxDepth()}. */
    public Builder maxDepth(final int value) {
      this.maxDepth = value;
      return this;
    }

    /** The limits; throws IllegalArgumentException when one is out of range. */
    public DagCborLimits build() {
      return new DagCborLimits(maxInputSize, maxDepth);
    }
  }
}
