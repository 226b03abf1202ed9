package io.relaypinner.relay.testing;

import io.relaypinner.ipfs.pin.PinHolder;

/** The holder of pins a test takes directly on a node's pin store. */
public final class TestPins {
  /** A test's own hold, released by nothing but the test. */
  public static final PinHolder HOLDER = PinHolder.of("test", "pinned-by-the-test");

  private TestPins() {
  }
}
