package io.relaypinner.handoff.guest;

import java.util.List;
import java.util.OptionalInt;

/** A relay the guest started ({@link RelayLauncher}): what the guest reports about it. */
public interface RunningRelay extends AutoCloseable {
  /** The relay's PeerId (base58). */
  String peerId();

  /** What the relay advertises now (its {@code /multiaddrs} {@code all}), with {@code /p2p/}. */
  List<String> multiaddrs();

  /** The relay's bound HTTP port, when its HTTP listener runs. */
  OptionalInt httpPort();

  /** Stops the relay (bounded). */
  @Override
  void close();
}
