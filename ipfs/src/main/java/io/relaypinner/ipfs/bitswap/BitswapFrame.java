package io.relaypinner.ipfs.bitswap;

import io.relaypinner.multiformats.Cid;
import java.util.List;
import java.util.Objects;

/**
 * One bitswap message (ipfs/specs src/bitswap-protocol.md), decoded and checked: wantlist
 * entries with parsed CIDs, blocks whose bytes were verified against their CID, and block
 * presences. Built by {@link BitswapFrameCodec}.
 *
 * @param wants wantlist entries (wants and cancels), in message order
 * @param full whether the wantlist replaces the sender's previous one
 * @param blocks verified blocks
 * @param presences HAVE / DONT_HAVE answers
 * @param pendingBytes bytes the sender still has queued for us (informational)
 */
public record BitswapFrame(List<Want> wants, boolean full, List<Block> blocks,
    List<Presence> presences, int pendingBytes) {

  /** An empty message. */
  public static final BitswapFrame EMPTY = new BitswapFrame(List.of(), false, List.of(),
      List.of(), 0);

  /** Copies the lists. */
  public BitswapFrame {
    wants = List.copyOf(wants);
    blocks = List.copyOf(blocks);
    presences = List.copyOf(presences);
  }

  /** Whether it carries nothing at all. */
  public boolean isEmpty() {
    return wants.isEmpty() && !full && blocks.isEmpty() && presences.isEmpty();
  }

  /** What a want asks for. */
  public enum WantType {
    /** Send the block. */
    BLOCK,
    /** Tell whether you have it (1.2.0). */
    HAVE
  }

  /** A wantlist entry: a want, or with {@code cancel} the withdrawal of one. */
  public record Want(Cid cid, int priority, boolean cancel, WantType type,
      boolean sendDontHave) {
    public Want {
      Objects.requireNonNull(cid, "cid");
      Objects.requireNonNull(type, "type");
    }

    public static Want block(final Cid cid, final boolean sendDontHave) {
      return new Want(cid, 1, false, WantType.BLOCK, sendDontHave);
    }

    public static Want have(final Cid cid, final boolean sendDontHave) {
      return new Want(cid, 1, false, WantType.HAVE, sendDontHave);
    }

    public static Want cancel(final Cid cid) {
      return new Want(cid, 0, true, WantType.BLOCK, false);
    }
  }

  /** A block and the CID it was verified against. */
  public record Block(Cid cid, byte[] data) {
    public Block {
      Objects.requireNonNull(cid, "cid");
      Objects.requireNonNull(data, "data");
    }
  }

  /** Whether the sender has a block. */
  public record Presence(Cid cid, boolean have) {
    public Presence {
      Objects.requireNonNull(cid, "cid");
    }
  }
}
