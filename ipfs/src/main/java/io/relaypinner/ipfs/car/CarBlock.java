package io.relaypinner.ipfs.car;

import io.relaypinner.multiformats.Cid;
import java.util.Objects;

/**
 * One section of a CAR v1: a CID and the block's bytes (not copied: do not change them).
 */
public record CarBlock(Cid cid, byte[] data) {
  /** Validates. */
  public CarBlock {
    Objects.requireNonNull(cid, "cid");
    Objects.requireNonNull(data, "data");
  }
}
