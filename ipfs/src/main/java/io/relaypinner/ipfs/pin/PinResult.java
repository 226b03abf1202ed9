package io.relaypinner.ipfs.pin;

import io.relaypinner.multiformats.Cid;
import java.util.List;

/** What {@link PinStore#pin} did. */
public sealed interface PinResult {
  /** The root asked for. */
  Cid root();

  /** Every block was present; the pin is recorded (durably). */
  record Pinned(Cid root, long blocks, long bytes) implements PinResult {}

  /** Some blocks are absent; nothing was recorded. {@code missing} lists them, as linked. */
  record Incomplete(Cid root, List<Cid> missing) implements PinResult {
    /** Copies the list. */
    public Incomplete {
      missing = List.copyOf(missing);
    }
  }
}
