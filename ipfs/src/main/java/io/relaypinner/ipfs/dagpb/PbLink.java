package io.relaypinner.ipfs.dagpb;

import io.relaypinner.multiformats.Cid;
import java.util.Objects;
import java.util.Optional;

/**
 * One {@code PBLink} of a DAG-PB node ({@code ipld/ipld} {@code specs/codecs/dag-pb/spec.md}):
 * the target CID, an optional name and an optional cumulative size. An absent name differs from
 * an empty one on the wire, so both are kept apart.
 *
 * @param hash the linked block
 * @param name the link name (UTF-8 on the wire), absent when the field is not written
 * @param tsize the cumulative size of the linked DAG, absent when not written; never negative
 */
public record PbLink(Cid hash, Optional<String> name, Optional<Long> tsize) {
  /** Validates. */
  public PbLink {
    Objects.requireNonNull(hash, "hash");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(tsize, "tsize");
    if (tsize.isPresent() && tsize.get() < 0) {
      throw new DagPbException("link Tsize cannot be negative: " + tsize.get());
    }
  }

  /** A link with a name and a size. */
  public static PbLink of(final Cid hash, final String name, final long tsize) {
    return new PbLink(hash, Optional.of(name), Optional.of(tsize));
  }

  /** The name, or the empty string when absent (the spec sorts absent names as empty). */
  public String nameOrEmpty() {
    return name.orElse("");
  }
}
