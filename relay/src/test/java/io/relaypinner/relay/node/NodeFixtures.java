package io.relaypinner.relay.node;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.relay.api.AdvertisedAddresses;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.config.StorageLimits;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.tls.CertificateStore;
import io.relaypinner.testkit.MutableClock;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/** What the subsystems' wiring tests build them from: memory stores, a mutable clock. */
final class NodeFixtures {
  static final NodeIdentity IDENTITY = identity();

  private NodeFixtures() {}

  private static NodeIdentity identity() {
    final byte[] seed = new byte[32];
    Arrays.fill(seed, (byte) 9);
    final PrivateKey key = Ed25519PrivateKey.fromSeed(seed);
    return new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
  }

  static MutableClock clock() {
    return new MutableClock(Instant.parse("2026-11-29T10:00:00Z"));
  }

  /** A local relay's settings: loopback, ephemeral ports, no IPv6, data under {@code dir}. */
  static RelayConfig config(final Path dir) {
    return RelayConfig.builder().dataDir(dir).metricsHost("127.0.0.1").metricsPort(0)
        .listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).quicPort(0).ipv6Disabled(true).build();
  }

  static StorageSubsystem memoryStorage(final PrometheusRegistry registry,
      final MutableClock clock) {
    return new StorageSubsystem(new MemoryBlockstore(), new MemoryDatastore(),
        StorageLimits.DEFAULT, IDENTITY.peerId().toBase58(), registry, clock, NodeTuning.DEFAULT,
        null);
  }

  static CertificateStore certificates(final Path dir, final MutableClock clock) {
    return new CertificateStore(dir, CertificateStore.DEFAULT_POLL_INTERVAL, clock);
  }

  static AdvertisedAddresses advertiser(final RelayConfig config) {
    return new AdvertisedAddresses(IDENTITY.peerId(), config.deployment(),
        config.network().announce());
  }

  /** The thread {@code executor} runs a task on (so a test can see it end with the executor). */
  static Thread threadOf(final ExecutorService executor) throws Exception {
    final Callable<Thread> current = Thread::currentThread;
    return executor.submit(current).get(5, TimeUnit.SECONDS);
  }
}
