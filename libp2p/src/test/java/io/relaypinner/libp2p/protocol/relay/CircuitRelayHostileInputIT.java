package io.relaypinner.libp2p.protocol.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.host.RawExchange;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.HopMessage;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Peer;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Status;
import io.relaypinner.libp2p.record.ReservationVoucher;
import io.relaypinner.multiformats.Multiaddr;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Attacks on the hop service by a Java peer writing raw bytes: each bad request costs the
 * attacker that stream only (counted), never its connection or the relay.
 */
class CircuitRelayHostileInputIT {
  private static final SecureRandom RANDOM = new SecureRandom();
  private final EventLoops loops = EventLoops.create(2, "relay-hostile");
  private final List<Host> clients = new ArrayList<>();
  private Host relayHost;
  private CircuitRelay relay;

  @BeforeEach
  void start() throws Exception {
    relayHost = host();
    // A hop timeout of 2 s: short for the silent-stream case, long enough that the flood's 50
    // streams (each must send its RESERVE within it) survive a loaded machine (500 ms failed
    // with "truncated varint" at load 15-20).
    relay = CircuitRelay.start(relayHost, CircuitRelayConfig.builder()
        .hopTimeout(Duration.ofSeconds(2)).maxReservationsPerIp(4).build(), Clock.systemUTC(),
        relayHost::listenAddresses);
    relayHost.start().get(5, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() {
    relay.close();
    clients.forEach(Host::close);
    relayHost.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Host host() {
    return new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/hostile-test").build(), loops, Clock.systemUTC());
  }

  private Connection connect() throws Exception {
    final Host client = host();
    clients.add(client);
    return client.dial(relayHost.listenAddresses().get(0).withPeerId(relayHost.peerId()))
        .get(5, TimeUnit.SECONDS);
  }

  private static byte[] exchange(final Connection connection, final byte[] bytes)
      throws Exception {
    return RawExchange.exchange(connection, CircuitRelay.HOP_PROTOCOL_ID, bytes);
  }

  private static byte[] framed(final byte[] message) {
    return RawExchange.framed(message);
  }

  private static HopMessage parse(final byte[] framed) throws Exception {
    return HopMessage.parseFrom(RawExchange.unframed(framed));
  }

  private void assertConnectionStillWorks(final Connection connection) throws Exception {
    assertThat(connection.isOpen()).isTrue();
    final HopMessage answer = parse(exchange(connection, framed(HopMessage.newBuilder()
        .setType(HopMessage.Type.RESERVE).build().toByteArray())));
    assertThat(answer.getStatus()).isEqualTo(Status.OK);
  }

  @Test
  void reserve_shouldAnswerOkWithAVoucherAndTheRelayAddresses() throws Exception {
    final Connection connection = connect();
    final HopMessage answer = parse(exchange(connection, framed(HopMessage.newBuilder()
        .setType(HopMessage.Type.RESERVE).build().toByteArray())));
    assertThat(answer.getType()).isEqualTo(HopMessage.Type.STATUS);
    assertThat(answer.getStatus()).isEqualTo(Status.OK);
    final ReservationVoucher voucher = ReservationVoucher.open(
        answer.getReservation().getVoucher().toByteArray());
    assertThat(voucher.relay()).isEqualTo(relayHost.peerId());
    assertThat(voucher.peer()).isEqualTo(clients.get(0).peerId());
    assertThat(voucher.expiration()).isEqualTo(answer.getReservation().getExpire());
    assertThat(Multiaddr.fromBytes(answer.getReservation().getAddrs(0).toByteArray()))
        .isEqualTo(relayHost.listenAddresses().get(0).withPeerId(relayHost.peerId()));
    assertThat(answer.getLimit().getDuration()).isEqualTo(20 * 60);
    assertThat(answer.getLimit().getData()).isEqualTo(CircuitRelayConfig.DEFAULT_DATA_LIMIT);
  }

  @Test
  void malformedMessage_shouldBeAnsweredMalformedAndCounted() throws Exception {
    final Connection connection = connect();
    final HopMessage answer = parse(exchange(connection, framed(new byte[] {(byte) 0xff, 0x01,
        0x02})));
    assertThat(answer.getStatus()).isEqualTo(Status.MALFORMED_MESSAGE);
    final HopMessage noType = parse(exchange(connection, framed(HopMessage.newBuilder()
        .setStatus(Status.OK).build().toByteArray())));
    assertThat(noType.getStatus()).isEqualTo(Status.MALFORMED_MESSAGE);
    final HopMessage connectWithoutPeer = parse(exchange(connection, framed(HopMessage
        .newBuilder().setType(HopMessage.Type.CONNECT).build().toByteArray())));
    assertThat(connectWithoutPeer.getStatus()).isEqualTo(Status.MALFORMED_MESSAGE);
    final HopMessage badPeerId = parse(exchange(connection, framed(HopMessage.newBuilder()
        .setType(HopMessage.Type.CONNECT).setPeer(Peer.newBuilder()
            .setId(ByteString.copyFrom(new byte[] {1, 2, 3}))).build().toByteArray())));
    assertThat(badPeerId.getStatus()).isEqualTo(Status.MALFORMED_MESSAGE);
    assertThat(relay.engine().refusals().get(RelayRefusal.MALFORMED)).isEqualTo(4);
    assertConnectionStillWorks(connection);
  }

  @Test
  void statusMessage_shouldBeAnsweredUnexpected() throws Exception {
    final Connection connection = connect();
    final HopMessage answer = parse(exchange(connection, framed(HopMessage.newBuilder()
        .setType(HopMessage.Type.STATUS).setStatus(Status.OK).build().toByteArray())));
    assertThat(answer.getStatus()).isEqualTo(Status.UNEXPECTED_MESSAGE);
    assertThat(relay.engine().refusals().get(RelayRefusal.UNEXPECTED)).isEqualTo(1);
  }

  @Test
  void oversizedMessage_shouldCloseTheStreamOnly() throws Exception {
    final Connection connection = connect();
    // A length prefix of 1 MiB: refused before a byte of the body is buffered.
    assertThat(exchange(connection, new byte[] {(byte) 0x80, (byte) 0x80, 0x40, 1, 2, 3}))
        .isEmpty();
    // 5,000 bytes announced and sent: over the 4 KiB limit.
    final byte[] big = new byte[5_000];
    assertThat(exchange(connection, framed(big))).isEmpty();
    assertThat(relay.engine().refusals().get(RelayRefusal.OVERSIZED)).isEqualTo(2);
    assertConnectionStillWorks(connection);
  }

  @Test
  void silentStream_shouldBeClosedAtTheHopTimeout() throws Exception {
    final Connection connection = connect();
    assertThat(exchange(connection, new byte[0])).isEmpty();
    assertThat(relay.engine().refusals().get(RelayRefusal.TIMEOUT)).isEqualTo(1);
    assertConnectionStillWorks(connection);
  }

  @Test
  void connectToAnUnknownPeer_shouldBeAnsweredNoReservation() throws Exception {
    final Connection connection = connect();
    final HopMessage answer = parse(exchange(connection, framed(HopMessage.newBuilder()
        .setType(HopMessage.Type.CONNECT).setPeer(Peer.newBuilder().setId(ByteString.copyFrom(
            Keys.generate(KeyType.ED25519, RANDOM).publicKey().peerId().bytes())))
        .build().toByteArray())));
    assertThat(answer.getStatus()).isEqualTo(Status.NO_RESERVATION);
    assertThat(relay.engine().refusals().get(RelayRefusal.NO_RESERVATION)).isEqualTo(1);
    assertThat(relay.engine().openCircuits()).isZero();
  }

  @Test
  void connectToAPeerThatDoesNotAcceptStop_shouldFailTheCircuitOnly() throws Exception {
    final Connection target = connect();
    assertConnectionStillWorks(target);
    final Connection source = connect();
    final HopMessage answer = parse(exchange(source, framed(HopMessage.newBuilder()
        .setType(HopMessage.Type.CONNECT).setPeer(Peer.newBuilder().setId(ByteString.copyFrom(
            clients.get(0).peerId().bytes()))).build().toByteArray())));
    assertThat(answer.getStatus()).isEqualTo(Status.CONNECTION_FAILED);
    assertThat(relay.engine().refusals().get(RelayRefusal.CONNECTION_FAILED)).isEqualTo(1);
    assertThat(relay.engine().openCircuits()).isZero();
    assertThat(relay.engine().circuitsEnded().get(CircuitEnd.NOT_ESTABLISHED)).isEqualTo(1);
    assertThat(target.isOpen()).isTrue();
    assertConnectionStillWorks(source);
  }

  @Test
  void reservationFlood_shouldHoldOneSlotPerPeerAndRespectTheIpShare() throws Exception {
    final Connection connection = connect();
    final byte[] reserve = framed(HopMessage.newBuilder().setType(HopMessage.Type.RESERVE)
        .build().toByteArray());
    final List<CompletableFuture<byte[]>> answers = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      answers.add(CompletableFuture.supplyAsync(() -> {
        try {
          return exchange(connection, reserve);
        } catch (final Exception e) {
          throw new IllegalStateException(e);
        }
      }));
    }
    for (final CompletableFuture<byte[]> answer : answers) {
      assertThat(parse(answer.get(20, TimeUnit.SECONDS)).getStatus()).isEqualTo(Status.OK);
    }
    assertThat(relay.engine().reservations()).isEqualTo(1);
    assertThat(relay.engine().reservationsRefreshed()).isEqualTo(49);
    // Many identities from one IP: the IP's share (4) and no more.
    int refused = 0;
    for (int i = 0; i < 6; i++) {
      final HopMessage answer = parse(exchange(connect(), reserve));
      if (answer.getStatus() == Status.RESERVATION_REFUSED) {
        refused++;
      }
    }
    assertThat(refused).isEqualTo(3);
    assertThat(relay.engine().refusals().get(RelayRefusal.IP_RESERVATION_LIMIT)).isEqualTo(3);
    // A peer that goes away frees its slot.
    connection.close().sync();
    await().atMost(Duration.ofSeconds(5)).until(() -> relay.engine().reservations() == 3);
  }
}
