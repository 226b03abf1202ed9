package io.relaypinner.libp2p.protocol.autonat;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.host.RawExchange;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.autonat.pb.AutoNatProtos.Message;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The AutoNAT v1 server against a Java client speaking the protocol byte by byte. */
class AutoNatIT {
  private static final SecureRandom RANDOM = new SecureRandom();
  private final EventLoops loops = EventLoops.create(2, "autonat-test");
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final AtomicBoolean allowPrivate = new AtomicBoolean(true);
  private final Host server = host();
  private final Host client = host();
  private AutoNat autonat;

  private Host host() {
    return new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/autonat-test").build(), loops, Clock.systemUTC());
  }

  @AfterEach
  void stop() {
    if (autonat != null) {
      autonat.close();
    }
    client.close();
    server.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Connection start() throws Exception {
    autonat = AutoNat.start(server, AutoNatConfig.DEFAULT, clock, a -> allowPrivate.get());
    server.start().get(5, TimeUnit.SECONDS);
    client.start().get(5, TimeUnit.SECONDS);
    return client.dial(server.listenAddresses().get(0).withPeerId(server.peerId()))
        .get(5, TimeUnit.SECONDS);
  }

  private static Message dial(final Connection connection, final PeerId peer,
      final Multiaddr... addresses) throws Exception {
    final Message.PeerInfo.Builder info = Message.PeerInfo.newBuilder()
        .setId(ByteString.copyFrom(peer.bytes()));
    for (final Multiaddr address : addresses) {
      info.addAddrs(ByteString.copyFrom(address.bytes()));
    }
    final Message request = Message.newBuilder().setType(Message.MessageType.DIAL)
        .setDial(Message.Dial.newBuilder().setPeer(info)).build();
    return Message.parseFrom(RawExchange.unframed(RawExchange.exchange(connection,
        AutoNat.PROTOCOL_ID, RawExchange.framed(request.toByteArray()))));
  }

  @Test
  void dialRequest_shouldBeDialledBack_onTheRequestersOwnIp() throws Exception {
    final Connection connection = start();
    final Multiaddr reachable = client.listenAddresses().get(0);
    final Message answer = dial(connection, client.peerId(), reachable);
    assertThat(answer.getDialResponse().getStatus()).isEqualTo(Message.ResponseStatus.OK);
    assertThat(Multiaddr.fromBytes(answer.getDialResponse().getAddr().toByteArray()))
        .isEqualTo(reachable);
    assertThat(autonat.engine().counters().get("dial_ok")).isEqualTo(1);
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void unreachableAddress_shouldAnswerDialError() throws Exception {
    final Connection connection = start();
    final Message answer = dial(connection, client.peerId(),
        Multiaddr.parse("/ip4/127.0.0.1/tcp/1"));
    assertThat(answer.getDialResponse().getStatus())
        .isEqualTo(Message.ResponseStatus.E_DIAL_ERROR);
  }

  @Test
  void addressesOfOtherIpsOrPrivateInDeployedMode_shouldNeverBeDialled() throws Exception {
    final Connection connection = start();
    final Message otherIp = dial(connection, client.peerId(),
        Multiaddr.parse("/ip4/192.0.2.10/tcp/4001"), Multiaddr.parse("/dns4/example.com/tcp/1"));
    assertThat(otherIp.getDialResponse().getStatus())
        .isEqualTo(Message.ResponseStatus.E_DIAL_REFUSED);
    allowPrivate.set(false);
    final Message privateAddress = dial(connection, client.peerId(),
        client.listenAddresses().get(0));
    assertThat(privateAddress.getDialResponse().getStatus())
        .isEqualTo(Message.ResponseStatus.E_DIAL_REFUSED);
    assertThat(autonat.engine().counters().get("refused_no_dialable_address")).isEqualTo(2);
  }

  @Test
  void requestForAnotherPeer_shouldBeABadRequest() throws Exception {
    final Connection connection = start();
    final Message answer = dial(connection, server.peerId(), client.listenAddresses().get(0));
    assertThat(answer.getDialResponse().getStatus())
        .isEqualTo(Message.ResponseStatus.E_BAD_REQUEST);
    assertThat(autonat.engine().counters().get("refused_bad_request")).isEqualTo(1);
  }

  @Test
  void requests_shouldBeRateLimitedPerPeer_untilTheWindowPasses() throws Exception {
    final Connection connection = start();
    final Multiaddr unreachable = Multiaddr.parse("/ip4/127.0.0.1/tcp/1");
    for (int i = 0; i < AutoNatConfig.DEFAULT.peerDialsPerWindow(); i++) {
      assertThat(dial(connection, client.peerId(), unreachable).getDialResponse().getStatus())
          .isEqualTo(Message.ResponseStatus.E_DIAL_ERROR);
    }
    assertThat(dial(connection, client.peerId(), unreachable).getDialResponse().getStatus())
        .isEqualTo(Message.ResponseStatus.E_DIAL_REFUSED);
    assertThat(autonat.engine().counters().get("refused_peer_rate")).isEqualTo(1);
    clock.advance(AutoNatConfig.DEFAULT.window());
    assertThat(dial(connection, client.peerId(), unreachable).getDialResponse().getStatus())
        .isEqualTo(Message.ResponseStatus.E_DIAL_ERROR);
  }

  @Test
  void engine_shouldCapTheGlobalRate() {
    final AutoNatEngine engine = new AutoNatEngine(AutoNatConfig.DEFAULT.withRates(2, 2), clock,
        a -> true);
    final byte[] ip = {(byte) 203, 0, 113, 5};
    final Multiaddr address = Multiaddr.parse("/ip4/203.0.113.5/tcp/4001");
    for (int i = 0; i < 2; i++) {
      assertThat(engine.decide(Keys.generate(KeyType.ED25519, RANDOM).publicKey().peerId(), ip,
          List.of(address)).dial()).containsExactly(address);
    }
    assertThat(engine.decide(Keys.generate(KeyType.ED25519, RANDOM).publicKey().peerId(), ip,
        List.of(address)).refusal()).isEqualTo(AutoNatEngine.Refusal.GLOBAL_RATE);
    assertThat(engine.decide(Keys.generate(KeyType.ED25519, RANDOM).publicKey().peerId(), ip,
        List.of(Multiaddr.parse("/ip4/203.0.113.5/udp/4001/quic-v1"))).refusal())
        .isEqualTo(AutoNatEngine.Refusal.GLOBAL_RATE);
    assertThat(engine.trackedPeers()).isEqualTo(2);
  }

}
