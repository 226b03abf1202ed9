package io.relaypinner.handoff.guest;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A launcher for tests of the handoff alone: "starts" a relay by reading the env file and
 * reporting the PeerId of the identity in its data directory (what the real relay would do).
 */
final class FakeRelayLauncher implements RelayLauncher {
  final List<Map<String, String>> started = new CopyOnWriteArrayList<>();
  final List<FakeRelay> relays = new CopyOnWriteArrayList<>();
  volatile String failWith;

  @Override
  public RunningRelay start(final Path envFile) throws Exception {
    if (failWith != null) {
      throw new IllegalStateException(failWith);
    }
    final Map<String, String> env = RelayEnvFile.read(envFile);
    started.add(env);
    final String peerId = io.relaypinner.libp2p.crypto.PrivateKeyFile.load(
        Path.of(env.get("DATASTORE_PATH")).resolve("identity.key")).publicKey().peerId()
        .toBase58();
    final FakeRelay relay = new FakeRelay(peerId,
        List.of("/ip4/" + env.get("PUBLIC_IPV4") + "/tcp/" + env.get("EXTERNAL_RELAY_TCP_PORT")
            + "/p2p/" + peerId));
    relays.add(relay);
    return relay;
  }

  static final class FakeRelay implements RunningRelay {
    private final String peerId;
    private final List<String> multiaddrs;
    volatile boolean closed;

    FakeRelay(final String peerId, final List<String> multiaddrs) {
      this.peerId = peerId;
      this.multiaddrs = multiaddrs;
    }

    @Override
    public String peerId() {
      return peerId;
    }

    @Override
    public List<String> multiaddrs() {
      return multiaddrs;
    }

    @Override
    public OptionalInt httpPort() {
      return OptionalInt.empty();
    }

    @Override
    public void close() {
      closed = true;
    }
  }
}
