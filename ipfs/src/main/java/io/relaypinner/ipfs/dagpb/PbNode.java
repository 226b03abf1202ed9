package io.relaypinner.ipfs.dagpb;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A DAG-PB {@code PBNode} ({@code ipld/ipld} {@code specs/codecs/dag-pb/spec.md}): optional data
 * bytes and an ordered list of links. The data array is copied in and out so the record stays
 * immutable. {@link DagPb#encode} insists that links are sorted by name bytes, as the spec
 * requires of encoders; {@link #sorted()} makes such a node.
 *
 * @param data the {@code Data} field, absent when not written (distinct from empty)
 * @param links the {@code Links}, in wire order
 */
public record PbNode(Optional<byte[]> data, List<PbLink> links) {
  /** Orders links as the spec demands: by the UTF-8 bytes of the name, absent as empty. */
  public static final Comparator<PbLink> LINK_ORDER =
      (a, b) -> Arrays.compareUnsigned(DagPb.utf8(a.nameOrEmpty()), DagPb.utf8(b.nameOrEmpty()));

  /** Copies. */
  public PbNode {
    Objects.requireNonNull(data, "data");
    data = data.map(byte[]::clone);
    links = List.copyOf(links);
  }

  /** A node with data and links. */
  public static PbNode of(final byte[] data, final List<PbLink> links) {
    return new PbNode(Optional.of(data), links);
  }

  /** A copy of the data bytes, if present. */
  @Override
  public Optional<byte[]> data() {
    return data.map(byte[]::clone);
  }

  /** This node with its links stably sorted into {@link #LINK_ORDER}. */
  public PbNode sorted() {
    final List<PbLink> copy = new ArrayList<>(links);
    copy.sort(LINK_ORDER);
    return new PbNode(data, copy);
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof PbNode other
        && links.equals(other.links)
        && data.isPresent() == other.data.isPresent()
        && (data.isEmpty() || Arrays.equals(data.get(), other.data.get()));
  }

  @Override
  public int hashCode() {
    return 31 * links.hashCode() + data.map(Arrays::hashCode).orElse(-1);
  }

  @Override
  public String toString() {
    return "PbNode[data=" + data.map(d -> d.length + " bytes").orElse("absent")
        + ", links=" + links + "]";
  }
}
