package io.relaypinner.handoff.deploy;

import io.relaypinner.common.Failures;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link PeerHandshake} with this project's libp2p {@link Host}: an ephemeral Ed25519 identity
 * (the deployer proves nothing about itself), no listener, one event loop, TCP + Noise + yamux as
 * any peer dials the relay. The handoff module depends on {@code libp2p} already (keys); this is
 * its only use of the host.
 */
public final class Libp2pPeerHandshake implements PeerHandshake, AutoCloseable {
  private final EventLoops loops;
  private final Host host;
  private final Duration timeout;

  /**
   * @param timeout bound of one dial plus handshake
   */
  public Libp2pPeerHandshake(final SecureRandom random, final Duration timeout) {
    this.timeout = timeout;
    this.loops = EventLoops.create(1, "deploy-handshake");
    this.host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .agentVersion("relay-pinner-deployer").dialTimeout(timeout).upgradeTimeout(timeout)
        .build(), loops, Clock.systemUTC());
  }

  @Override
  public PeerId prove(final String ip, final int port) throws IOException, InterruptedException {
    final Multiaddr address = Multiaddr.parse((ip.indexOf(':') >= 0 ? "/ip6/" : "/ip4/") + ip
        + "/tcp/" + port);
    final Future<Connection> dial = host.dial(address);
    final Connection connection;
    try {
      connection = dial.get(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
    } catch (final ExecutionException e) {
      final Throwable cause = Failures.unwrap(e);
      throw new IOException("no libp2p handshake with " + address + ": " + cause.getClass()
          .getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage()));
    } catch (final TimeoutException e) {
      dial.cancel(true);
      throw new IOException("no libp2p handshake with " + address + " within "
          + timeout.multipliedBy(2).toMillis() + " ms");
    }
    try {
      return connection.remotePeer();
    } finally {
      connection.close();
    }
  }

  @Override
  public void close() {
    host.close();
    loops.group().shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5,
        TimeUnit.SECONDS);
  }
}
