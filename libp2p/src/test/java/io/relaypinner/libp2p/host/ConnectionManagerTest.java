package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.common.budget.IpPrefix;
import io.relaypinner.common.budget.IpRange;
import io.relaypinner.common.budget.KeyedScopes;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.host.PeerBanEngine.Fault;
import io.relaypinner.libp2p.multistream.MultistreamConfig;
import io.relaypinner.libp2p.multistream.ProtocolInstaller;
import io.relaypinner.libp2p.mux.yamux.YamuxSessionListener;
import io.relaypinner.libp2p.security.noise.SecureSession;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ConnectionManager} without sockets: connections are {@link EmbeddedChannel}s whose event
 * loops run on the same {@link MockTicker} as the manager, so its timers (handshake deadline, idle
 * timer, stalled-budget watch, read pauses) fire exactly when the test advances time; bans run on
 * a {@link MutableClock}.
 */
class ConnectionManagerTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String PROTOCOL = "/test/1.0.0";

  private final MockTicker ticker = Ticker.newMockTicker();
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-25T00:00:00Z"));
  private final List<EmbeddedChannel> channels = new ArrayList<>();
  private final List<Channel> installed = new ArrayList<>();
  private final ProtocolInstaller installer = (stream, protocol) -> installed.add(stream);
  private ConnectionManager manager;

  /** A remote peer: its id and the key the (skipped) handshake would have proven. */
  private record Peer(PeerId id, PublicKey key) {
    static Peer create() {
      final PublicKey key = Keys.generate(KeyType.ED25519, RANDOM).publicKey();
      return new Peer(key.peerId(), key);
    }
  }

  /** An embedded channel with a real remote IP address (embedded channels have none). */
  private static final class RemoteChannel extends EmbeddedChannel {
    private final SocketAddress remote;

    RemoteChannel(final Builder builder, final SocketAddress remote) throws Exception {
      super(builder.register(false));
      this.remote = remote;
      register();
    }

    @Override
    protected SocketAddress remoteAddress0() {
      return remote;
    }
  }

  private ConnectionManager manager(final ConnectionLimits limits) {
    manager = new ConnectionManager(limits, clock, ticker);
    return manager;
  }

  private LimitCounters counters() {
    return manager.counters();
  }

  private EmbeddedChannel channel() {
    return track(EmbeddedChannel.builder().ticker(ticker).build());
  }

  private EmbeddedChannel channelFrom(final String ip) throws Exception {
    return track(new RemoteChannel(EmbeddedChannel.builder().ticker(ticker),
        new InetSocketAddress(ip, 4001)));
  }

  private EmbeddedChannel stream(final Channel connection) {
    return track(EmbeddedChannel.builder().parent(connection).ticker(ticker).build());
  }

  private EmbeddedChannel track(final EmbeddedChannel channel) {
    channels.add(channel);
    return channel;
  }

  /** A connection to {@code peer} on {@code channel}, as the upgrader makes it (not muxed). */
  private Connection connection(final EmbeddedChannel channel, final Peer peer) {
    return new Connection(channel, new SecureSession(peer.id(), peer.key(), List.of(),
        Optional.empty(), false), null, Direction.INBOUND, Multiaddr.EMPTY, Multiaddr.EMPTY,
        ConnectionUpgrader.YAMUX_PROTOCOL_ID, MultistreamConfig.DEFAULT, clock.instant());
  }

  /** What the upgrader does once the muxer is up: the connection state, then established. */
  private Connection establish(final EmbeddedChannel channel, final Peer peer) {
    state(channel);
    final Connection connection = connection(channel, peer);
    manager.established(connection);
    return connection;
  }

  private YamuxSessionListener state(final Channel channel) {
    return manager.newConnectionState(channel, YamuxSessionListener.NOOP);
  }

  /** Advances the ticker and runs what fell due on every channel's loop. */
  private void advance(final Duration by) {
    ticker.advance(by.toNanos(), TimeUnit.NANOSECONDS);
    for (final EmbeddedChannel channel : List.copyOf(channels)) {
      channel.runScheduledPendingTasks();
      channel.runPendingTasks();
    }
  }

  @AfterEach
  void releaseEverything() {
    for (final EmbeddedChannel channel : channels) {
      channel.finishAndReleaseAll();
    }
  }

  // --- admission ------------------------------------------------------------------------------

  @Test
  void admitInbound_shouldCloseChannelsBeyondMaxConnections_andAdmitAgainOnceOneCloses() {
    manager(ConnectionLimits.builder().maxConnections(2).build());
    final EmbeddedChannel outbound = channel();
    manager.trackOutbound(outbound);
    final EmbeddedChannel first = channel();
    assertThat(manager.admitInbound(first)).isTrue();
    assertThat(manager.openChannels()).isEqualTo(2);
    assertThat(manager.openInboundChannels()).isEqualTo(1);

    // Dialled channels count against the cap too, so the second inbound one is one too many.
    final EmbeddedChannel refused = channel();
    assertThat(manager.admitInbound(refused)).isFalse();
    assertThat(refused.isOpen()).isFalse();
    assertThat(counters().get(Limit.MAX_CONNECTIONS)).isEqualTo(1);
    assertThat(manager.openChannels()).isEqualTo(2);
    // A refusal is not a failed handshake as well.
    assertThat(counters().get(Limit.HANDSHAKE_FAILED)).isZero();

    outbound.close();
    assertThat(manager.openChannels()).isEqualTo(1);
    assertThat(manager.admitInbound(channel())).isTrue();
    assertThat(manager.openInboundChannels()).isEqualTo(2);
  }

  /** A budget of {@code total} connections, {@code perIp} per IP key, 10.0.0.1 exempt. */
  private ConnectionBudget budget(final int total, final int perIp) {
    final Scope transport = Scope.root("libp2p",
        Limits.NONE.with(Resource.CONNECTIONS, total), LimitListener.NONE);
    final KeyedScopes ips = new KeyedScopes(transport, "ip",
        Limits.NONE.with(Resource.CONNECTIONS, perIp), 16, LimitListener.NONE);
    final IpRange proxy = IpRange.parse("10.0.0.1");
    return new ConnectionBudget(transport, ips, IpPrefix.DEFAULT::key, proxy::contains);
  }

  @Test
  void admitInbound_shouldRefuseAnIpBeyondItsShare_halfOpenIncluded_whileOthersAreAdmitted()
      throws Exception {
    final ConnectionBudget budget = budget(10, 2);
    manager = new ConnectionManager(ConnectionLimits.DEFAULT, budget, clock, ticker);
    final EmbeddedChannel first = channelFrom("203.0.113.7");
    assertThat(manager.admitInbound(first)).isTrue();
    assertThat(manager.admitInbound(channelFrom("203.0.113.7"))).isTrue();
    // Neither has sent a byte (half-open): the third from the same address is refused at once.
    final EmbeddedChannel third = channelFrom("203.0.113.7");
    assertThat(manager.admitInbound(third)).isFalse();
    assertThat(third.isOpen()).isFalse();
    assertThat(counters().get(Limit.MAX_CONNECTIONS_PER_IP)).isEqualTo(1);
    assertThat(counters().get(Limit.MAX_CONNECTIONS)).isZero();
    assertThat(counters().get(Limit.HANDSHAKE_FAILED)).isZero();
    assertThat(manager.admitInbound(channelFrom("203.0.113.8"))).isTrue();
    assertThat(budget.transport().used(Resource.CONNECTIONS)).isEqualTo(3);
    assertThat(budget.ips().peek("203.0.113.7/32").used(Resource.CONNECTIONS)).isEqualTo(2);

    // A closed one gives its slot back (the handshake deadline would have closed it).
    first.close();
    assertThat(manager.admitInbound(channelFrom("203.0.113.7"))).isTrue();
    assertThat(manager.openInboundChannels()).isEqualTo(3);
  }

  @Test
  void admitInbound_shouldKeyIpv6ByItsSlash64() throws Exception {
    manager = new ConnectionManager(ConnectionLimits.DEFAULT, budget(10, 1), clock, ticker);
    assertThat(manager.admitInbound(channelFrom("2001:db8:1:2::1"))).isTrue();
    assertThat(manager.admitInbound(channelFrom("2001:db8:1:2::ffff"))).isFalse();
    assertThat(manager.admitInbound(channelFrom("2001:db8:1:3::1"))).isTrue();
    assertThat(counters().get(Limit.MAX_CONNECTIONS_PER_IP)).isEqualTo(1);
  }

  @Test
  void admitInbound_shouldNotCapATrustedProxyPerIp_onlyInTotal() throws Exception {
    final ConnectionBudget budget = budget(4, 1);
    manager = new ConnectionManager(ConnectionLimits.DEFAULT, budget, clock, ticker);
    for (int i = 0; i < 4; i++) {
      assertThat(manager.admitInbound(channelFrom("10.0.0.1"))).isTrue();
    }
    assertThat(budget.ips().size()).isZero();
    assertThat(manager.admitInbound(channelFrom("10.0.0.1"))).isFalse();
    assertThat(manager.admitInbound(channelFrom("203.0.113.7"))).isFalse();
    assertThat(counters().get(Limit.MAX_CONNECTIONS)).isEqualTo(2);
    assertThat(counters().get(Limit.MAX_CONNECTIONS_PER_IP)).isZero();
    // A refusal by the total leaves no IP key behind.
    assertThat(budget.ips().size()).isZero();
  }

  @Test
  void trackOutbound_shouldTakeFromTheTransport_butNeverPerIp() throws Exception {
    final ConnectionBudget budget = budget(2, 1);
    manager = new ConnectionManager(ConnectionLimits.DEFAULT, budget, clock, ticker);
    final EmbeddedChannel dialled = channelFrom("203.0.113.7");
    manager.trackOutbound(dialled);
    manager.trackOutbound(channelFrom("203.0.113.7"));
    assertThat(budget.transport().used(Resource.CONNECTIONS)).isEqualTo(2);
    assertThat(budget.ips().size()).isZero();
    // Beyond the total, dialling still works without holding one.
    manager.trackOutbound(channelFrom("203.0.113.7"));
    assertThat(manager.openChannels()).isEqualTo(3);
    assertThat(budget.transport().used(Resource.CONNECTIONS)).isEqualTo(2);
    assertThat(manager.admitInbound(channelFrom("203.0.113.9"))).isFalse();
    dialled.close();
    assertThat(budget.transport().used(Resource.CONNECTIONS)).isEqualTo(1);
    assertThat(manager.admitInbound(channelFrom("203.0.113.9"))).isTrue();
  }

  @Test
  void trackOutbound_shouldNeverRefuse_evenBeyondMaxConnections() {
    manager(ConnectionLimits.builder().maxConnections(1).build());
    for (int i = 0; i < 3; i++) {
      manager.trackOutbound(channel());
    }
    assertThat(manager.openChannels()).isEqualTo(3);
    assertThat(manager.openInboundChannels()).isZero();
    assertThat(counters().get(Limit.MAX_CONNECTIONS)).isZero();
    assertThat(manager.admitInbound(channel())).isFalse();
  }

  @Test
  void handshakeDeadline_shouldCloseAnUnfinishedHandshake_andCountItOnceAsATimeout() {
    manager(ConnectionLimits.builder().handshakeTimeout(Duration.ofSeconds(10)).build());
    final EmbeddedChannel channel = channel();
    manager.admitInbound(channel);
    advance(Duration.ofMillis(9_999));
    assertThat(channel.isOpen()).isTrue();
    advance(Duration.ofMillis(1));
    assertThat(channel.isOpen()).isFalse();
    assertThat(counters().get(Limit.HANDSHAKE_TIMEOUT)).isEqualTo(1);
    assertThat(counters().get(Limit.HANDSHAKE_FAILED)).isZero();
    assertThat(manager.openChannels()).isZero();
    assertThat(manager.openInboundChannels()).isZero();
  }

  @Test
  void channelClosedDuringTheHandshake_shouldCountAsFailed_once() {
    manager(ConnectionLimits.DEFAULT);
    final EmbeddedChannel channel = channel();
    manager.admitInbound(channel);
    channel.close();
    advance(ConnectionLimits.DEFAULT.handshakeTimeout());
    assertThat(counters().get(Limit.HANDSHAKE_FAILED)).isEqualTo(1);
    assertThat(counters().get(Limit.HANDSHAKE_TIMEOUT)).isZero();
  }

  @Test
  void upgradeFailed_shouldCountTheRemotesFaults_butNotOurs() {
    manager(ConnectionLimits.DEFAULT);
    final EmbeddedChannel badPeer = channel();
    manager.admitInbound(badPeer);
    manager.upgradeFailed(badPeer, new BadPeerException("garbage"));
    assertThat(badPeer.isOpen()).isFalse();

    final EmbeddedChannel ourBug = channel();
    manager.admitInbound(ourBug);
    manager.upgradeFailed(ourBug, new InternalErrorException("ours"));
    assertThat(ourBug.isOpen()).isFalse();
    advance(ConnectionLimits.DEFAULT.handshakeTimeout());
    assertThat(counters().get(Limit.HANDSHAKE_FAILED)).isEqualTo(1);
    assertThat(counters().get(Limit.HANDSHAKE_TIMEOUT)).isZero();
  }

  @Test
  void establishedConnection_shouldNeitherTimeOutNorCountWhenItCloses() {
    manager(ConnectionLimits.builder().handshakeTimeout(Duration.ofSeconds(10))
        .idleTimeout(Duration.ZERO).build());
    final EmbeddedChannel channel = channel();
    manager.admitInbound(channel);
    establish(channel, Peer.create());
    advance(Duration.ofSeconds(30));
    assertThat(channel.isOpen()).isTrue();
    channel.close();
    assertThat(counters().snapshot().values()).allSatisfy(n -> assertThat(n).isZero());
    assertThat(manager.openChannels()).isZero();
  }

  // --- bans -----------------------------------------------------------------------------------

  @Test
  void refuseBanned_shouldRefuseABannedPeer_untilItsBanEnds() {
    manager(ConnectionLimits.builder().peerFaults(1).peerBanDuration(Duration.ofMinutes(1))
        .build());
    final Peer peer = Peer.create();
    final EmbeddedChannel channel = channel();
    manager.admitInbound(channel);
    assertThat(manager.refuseBanned(channel, peer.id())).isFalse();

    manager.bans().fault(peer.id(), null, Fault.MALFORMED_MESSAGE);
    manager.bans().fault(peer.id(), null, Fault.MALFORMED_MESSAGE);
    final EmbeddedChannel again = channel();
    manager.admitInbound(again);
    assertThat(manager.refuseBanned(again, peer.id())).isTrue();
    assertThat(counters().get(Limit.BANNED_PEER)).isEqualTo(1);
    // Counted as banned, not as a failed handshake as well when it closes.
    again.close();
    assertThat(counters().get(Limit.HANDSHAKE_FAILED)).isZero();

    clock.advance(Duration.ofMinutes(1).plusSeconds(1));
    final EmbeddedChannel later = channel();
    manager.admitInbound(later);
    assertThat(manager.refuseBanned(later, peer.id())).isFalse();
  }

  @Test
  void faultThatBansAPeer_shouldCloseEveryConnectionOfThePeer_only() {
    manager(ConnectionLimits.builder().peerFaults(2).idleTimeout(Duration.ZERO).build());
    final Peer peer = Peer.create();
    final Connection first = establish(channel(), peer);
    final Connection second = establish(channel(), peer);
    final Connection other = establish(channel(), Peer.create());
    first.reportFault(Fault.PROTOCOL_BOUND);
    second.reportFault(Fault.PROTOCOL_BOUND);
    assertThat(first.isOpen()).isTrue();
    assertThat(second.isOpen()).isTrue();

    first.reportFault(Fault.MALFORMED_MESSAGE);
    assertThat(first.isOpen()).isFalse();
    assertThat(second.isOpen()).isFalse();
    assertThat(other.isOpen()).isTrue();
    assertThat(counters().get(Limit.PEER_BANNED)).isEqualTo(1);
    assertThat(manager.bans().faults()).containsEntry(Fault.PROTOCOL_BOUND, 2L)
        .containsEntry(Fault.MALFORMED_MESSAGE, 1L);
  }

  @Test
  void faults_shouldOnlyBeCounted_whenBanningIsOff() {
    manager(ConnectionLimits.builder().peerFaults(1).peerBanDuration(Duration.ZERO)
        .idleTimeout(Duration.ZERO).build());
    final Connection connection = establish(channel(), Peer.create());
    for (int i = 0; i < 5; i++) {
      connection.reportFault(Fault.MALFORMED_MESSAGE);
    }
    assertThat(connection.isOpen()).isTrue();
    assertThat(counters().get(Limit.PEER_BANNED)).isZero();
    assertThat(manager.bans().faults()).containsEntry(Fault.MALFORMED_MESSAGE, 5L);
  }

  @Test
  void anIpWhosePeersWereBanned_shouldBeRefusedAtAccept_beforeAnyHandshake() throws Exception {
    manager(ConnectionLimits.builder().peerFaults(1).ipBanPeers(2).idleTimeout(Duration.ZERO)
        .build());
    for (int i = 0; i < 2; i++) {
      final Connection connection = establish(channelFrom("203.0.113.9"), Peer.create());
      connection.reportFault(Fault.MALFORMED_MESSAGE);
      connection.reportFault(Fault.MALFORMED_MESSAGE);
      assertThat(connection.isOpen()).isFalse();
    }
    final EmbeddedChannel sameIp = channelFrom("203.0.113.9");
    assertThat(manager.admitInbound(sameIp)).isFalse();
    assertThat(sameIp.isOpen()).isFalse();
    assertThat(counters().get(Limit.BANNED_IP)).isEqualTo(1);
    assertThat(manager.openInboundChannels()).isZero();
    assertThat(manager.admitInbound(channelFrom("203.0.113.10"))).isTrue();
  }

  // --- idle timeout ---------------------------------------------------------------------------

  @Test
  void idleTimeout_shouldCloseAConnectionWithoutStreams_afterTheTimeout() {
    manager(ConnectionLimits.builder().idleTimeout(Duration.ofSeconds(60)).build());
    final Connection connection = establish(channel(), Peer.create());
    // Checked every quarter of the timeout: still open at 45 s, closed at the 60 s check.
    advance(Duration.ofSeconds(45));
    assertThat(connection.isOpen()).isTrue();
    advance(Duration.ofSeconds(15));
    assertThat(connection.isOpen()).isFalse();
    assertThat(counters().get(Limit.IDLE_TIMEOUT)).isEqualTo(1);
  }

  @Test
  void idleTimeout_shouldCountFromTheLastStreamClosed_andNeverWhileOneIsOpen() {
    manager(ConnectionLimits.builder().idleTimeout(Duration.ofSeconds(60)).build());
    final EmbeddedChannel channel = channel();
    final YamuxSessionListener state = state(channel);
    final Connection connection = connection(channel, Peer.create());
    manager.established(connection);
    advance(Duration.ofSeconds(30));
    state.streamOpened(null);
    advance(Duration.ofMinutes(10));
    assertThat(connection.isOpen()).isTrue();
    state.streamClosed(null);
    advance(Duration.ofSeconds(45));
    assertThat(connection.isOpen()).isTrue();
    advance(Duration.ofSeconds(15));
    assertThat(connection.isOpen()).isFalse();
  }

  @Test
  void idleTimeoutZero_shouldKeepIdleConnections() {
    manager(ConnectionLimits.builder().idleTimeout(Duration.ZERO).build());
    final Connection connection = establish(channel(), Peer.create());
    advance(Duration.ofDays(1));
    assertThat(connection.isOpen()).isTrue();
    assertThat(counters().get(Limit.IDLE_TIMEOUT)).isZero();
  }

  // --- stream limits --------------------------------------------------------------------------

  @Test
  void streamOpenRate_shouldAllowABurstOfTwiceTheRate_thenRefillAtTheRate() throws Exception {
    manager(ConnectionLimits.builder().streamOpensPerSecond(2).defaultProtocolStreamLimit(100)
        .idleTimeout(Duration.ZERO).build());
    final Connection connection = establish(channel(), Peer.create());
    final ProtocolInstaller limited = manager.limitProtocols(installer);
    for (int i = 0; i < 4; i++) {
      limited.install(stream(connection.channel()), PROTOCOL);
    }
    final EmbeddedChannel fifth = stream(connection.channel());
    limited.install(fifth, PROTOCOL);
    assertThat(installed).hasSize(4);
    assertThat(fifth.isOpen()).isFalse();
    assertThat(counters().get(Limit.STREAM_OPEN_RATE)).isEqualTo(1);
    // Beyond the rate is a fault of the peer (unlike the per-protocol limit).
    assertThat(manager.bans().faults()).containsEntry(Fault.STREAM_OVER_LIMIT, 1L);

    // Two a second: 0.8 of a token after 400 ms, 1.2 after 600 ms.
    advance(Duration.ofMillis(400));
    limited.install(stream(connection.channel()), PROTOCOL);
    assertThat(installed).hasSize(4);
    advance(Duration.ofMillis(200));
    limited.install(stream(connection.channel()), PROTOCOL);
    assertThat(installed).hasSize(5);
    // A long quiet spell refills the bucket to its burst, not beyond.
    advance(Duration.ofMinutes(1));
    for (int i = 0; i < 5; i++) {
      limited.install(stream(connection.channel()), PROTOCOL);
    }
    assertThat(installed).hasSize(9);
    assertThat(counters().get(Limit.STREAM_OPEN_RATE)).isEqualTo(3);
  }

  @Test
  void protocolLimit_shouldResetStreamsBeyondIt_withoutAFault_andFreeASlotWhenOneCloses()
      throws Exception {
    manager(ConnectionLimits.builder().protocolStreamLimits(Map.of(PROTOCOL, 2, "/meshsub/*", 1))
        .idleTimeout(Duration.ZERO).build());
    final Connection connection = establish(channel(), Peer.create());
    final ProtocolInstaller limited = manager.limitProtocols(installer);
    final EmbeddedChannel first = stream(connection.channel());
    limited.install(first, PROTOCOL);
    limited.install(stream(connection.channel()), PROTOCOL);
    final EmbeddedChannel third = stream(connection.channel());
    limited.install(third, PROTOCOL);
    assertThat(installed).hasSize(2);
    assertThat(third.isOpen()).isFalse();
    assertThat(counters().get(Limit.MAX_PROTOCOL_STREAMS)).isEqualTo(1);
    assertThat(manager.bans().faults().values()).allSatisfy(n -> assertThat(n).isZero());

    first.close();
    limited.install(stream(connection.channel()), PROTOCOL);
    assertThat(installed).hasSize(3);

    // Protocols under one prefix entry share its count.
    limited.install(stream(connection.channel()), "/meshsub/1.1.0");
    final EmbeddedChannel meshsub = stream(connection.channel());
    limited.install(meshsub, "/meshsub/1.2.0");
    assertThat(meshsub.isOpen()).isFalse();
    assertThat(installed).hasSize(4);
  }

  @Test
  void protocolLimits_shouldBePerConnection() throws Exception {
    manager(ConnectionLimits.builder().protocolStreamLimits(Map.of(PROTOCOL, 1))
        .idleTimeout(Duration.ZERO).build());
    final Peer peer = Peer.create();
    final Connection first = establish(channel(), peer);
    final Connection second = establish(channel(), peer);
    final ProtocolInstaller limited = manager.limitProtocols(installer);
    limited.install(stream(first.channel()), PROTOCOL);
    limited.install(stream(second.channel()), PROTOCOL);
    assertThat(installed).hasSize(2);
    assertThat(counters().get(Limit.MAX_PROTOCOL_STREAMS)).isZero();
  }

  @Test
  void rejectedStreamsBeyondMaxRejected_shouldCloseTheConnectionAsAFlood() {
    manager(ConnectionLimits.builder().maxRejectedStreams(3).idleTimeout(Duration.ZERO).build());
    final EmbeddedChannel channel = channel();
    final YamuxSessionListener state = state(channel);
    manager.established(connection(channel, Peer.create()));
    for (int i = 0; i < 3; i++) {
      state.inboundStreamRejected(i);
    }
    assertThat(channel.isOpen()).isTrue();
    state.inboundStreamRejected(3);
    assertThat(channel.isOpen()).isFalse();
    assertThat(counters().get(Limit.MAX_STREAMS_PER_CONNECTION)).isEqualTo(4);
    assertThat(counters().get(Limit.STREAM_FLOOD)).isEqualTo(1);
    assertThat(manager.bans().faults()).containsEntry(Fault.PROTOCOL_VIOLATION, 1L);
  }

  @Test
  void sessionFailure_shouldCountAViolation_onlyWhenTheRemoteBrokeTheRules() {
    manager(ConnectionLimits.DEFAULT);
    final YamuxSessionListener state = state(channel());
    state.sessionFailed(new ProtocolViolationException("window overrun"));
    state.sessionFailed(new InternalErrorException("ours"));
    assertThat(counters().get(Limit.PROTOCOL_VIOLATION)).isEqualTo(1);
  }

  // --- a peer's inbound budgets ---------------------------------------------------------------

  @Test
  void inboundQueue_shouldBeSharedByAPeersConnections_andForgottenWhenTheLastCloses() {
    manager(ConnectionLimits.builder().idleTimeout(Duration.ZERO).build());
    final Peer peer = Peer.create();
    final Connection first = establish(channel(), peer);
    final Connection second = establish(channel(), peer);
    final Connection other = establish(channel(), Peer.create());
    assertThat(second.inboundQueue()).isSameAs(first.inboundQueue());
    assertThat(other.inboundQueue()).isNotSameAs(first.inboundQueue());

    final PeerInboundQueue shared = first.inboundQueue();
    first.close();
    final Connection third = establish(channel(), peer);
    assertThat(third.inboundQueue()).isSameAs(shared);
    second.close();
    third.close();
    assertThat(establish(channel(), peer).inboundQueue()).isNotSameAs(shared);
  }

  @Test
  void budgetFullForPeerQueueFullTimeout_shouldCloseTheConnection_asAFaultOfThePeer() {
    manager(ConnectionLimits.builder().peerQueuedMessages(2).peerQueueFullTimeout(
        Duration.ofSeconds(8)).idleTimeout(Duration.ZERO).build());
    final Connection connection = establish(channel(), Peer.create());
    final EmbeddedChannel stream = stream(connection.channel());
    connection.inboundQueue().admit(stream, 10);
    connection.inboundQueue().admit(stream, 10);
    assertThat(stream.config().isAutoRead()).isFalse();
    // Checked every quarter of the timeout: full for 6 s is fine, 8 s is not.
    advance(Duration.ofSeconds(6));
    assertThat(connection.isOpen()).isTrue();
    advance(Duration.ofSeconds(2));
    assertThat(connection.isOpen()).isFalse();
    assertThat(counters().get(Limit.PEER_QUEUE_STALLED)).isEqualTo(1);
    assertThat(manager.bans().faults()).containsEntry(Fault.INBOUND_QUEUE_FULL, 1L);
  }

  @Test
  void budgetThatDrainsInTime_shouldKeepTheConnection() {
    manager(ConnectionLimits.builder().peerQueuedMessages(2).peerQueueFullTimeout(
        Duration.ofSeconds(8)).idleTimeout(Duration.ZERO).build());
    final Connection connection = establish(channel(), Peer.create());
    final EmbeddedChannel stream = stream(connection.channel());
    final Runnable first = connection.inboundQueue().admit(stream, 10);
    final Runnable second = connection.inboundQueue().admit(stream, 10);
    advance(Duration.ofSeconds(6));
    first.run();
    second.run();
    advance(Duration.ofSeconds(6));
    // Full again: the count starts over.
    connection.inboundQueue().admit(stream, 10);
    connection.inboundQueue().admit(stream, 10);
    advance(Duration.ofSeconds(6));
    assertThat(connection.isOpen()).isTrue();
    assertThat(counters().get(Limit.PEER_QUEUE_STALLED)).isZero();
  }

  @Test
  void inboundBytesBeyondTheBurst_shouldPauseReading_untilThePeersBudgetRefills() {
    manager(ConnectionLimits.builder().peerInboundBytesPerSecond(1_000)
        .peerInboundBurstBytes(2_000).idleTimeout(Duration.ZERO).build());
    final Peer peer = Peer.create();
    final Connection first = establish(channel(), peer);
    final Connection second = establish(channel(), peer);
    final EmbeddedChannel one = (EmbeddedChannel) first.channel();
    final EmbeddedChannel two = (EmbeddedChannel) second.channel();
    one.writeInbound(Unpooled.wrappedBuffer(new byte[1_500]));
    assertThat(one.config().isAutoRead()).isTrue();
    // The peer's other connection draws on the same budget: 500 bytes over, half a second.
    two.writeInbound(Unpooled.wrappedBuffer(new byte[1_000]));
    assertThat(two.config().isAutoRead()).isFalse();
    assertThat(one.config().isAutoRead()).isTrue();
    assertThat(counters().get(Limit.PEER_INBOUND_BYTES)).isEqualTo(1);
    // Nothing is dropped: the bytes went on up the pipeline.
    final Object read = two.readInbound();
    assertThat(read).isNotNull();
    ReferenceCountUtil.release(read);

    advance(Duration.ofMillis(499));
    assertThat(two.config().isAutoRead()).isFalse();
    advance(Duration.ofMillis(1));
    assertThat(two.config().isAutoRead()).isTrue();
  }

  @Test
  void unlimitedInboundBytes_shouldAddNoBudget() {
    manager(ConnectionLimits.builder().peerInboundBytesPerSecond(0).idleTimeout(Duration.ZERO)
        .build());
    final Connection connection = establish(channel(), Peer.create());
    assertThat(connection.channel().pipeline().get("inbound-budget")).isNull();
    ((EmbeddedChannel) connection.channel()).writeInbound(
        Unpooled.wrappedBuffer(new byte[1 << 20]));
    assertThat(connection.channel().config().isAutoRead()).isTrue();
  }
}
