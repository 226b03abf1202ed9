package io.relaypinner.libp2p.host;

import io.relaypinner.libp2p.multistream.MultistreamConfig;
import io.relaypinner.libp2p.mux.yamux.YamuxConfig;
import io.relaypinner.libp2p.protocol.identify.IdentifyConfig;
import io.relaypinner.libp2p.protocol.ping.PingConfig;
import io.netty.handler.ssl.SslContext;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.libp2p.security.noise.NoiseConfig;
import io.relaypinner.libp2p.transport.quic.QuicConfig;
import io.relaypinner.libp2p.transport.ws.ServerTlsSource;
import io.relaypinner.multiformats.Multiaddr;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything a {@link Host} is configured with. Immutable; {@link #DEFAULT} listens nowhere.
 *
 * @param listenAddresses TCP addresses to bind ({@code /ip4/0.0.0.0/tcp/9091}; port 0 allowed)
 * @param agentVersion what identify reports, e.g. {@code relay-pinner/0.1.0}
 * @param dialTimeout TCP connect limit
 * @param peerStoreCapacity peers without a connection remembered before the least recently
 *     used is forgotten (also within a 64th of the heap: {@link PeerStore#recentBytesFor})
 * @param yamux the muxer's settings; its {@code maxInboundStreams} is replaced by
 *     {@link ConnectionLimits#maxStreamsPerConnection()}
 * @param limits the connection manager's limits, including the handshake timeout
 * @param webSocketTls the WebSocket listeners' certificate source: with a certificate, each
 *     accepted connection that starts with a TLS record gets TLS (the {@code /tls/ws} address),
 *     any other is plain WebSocket
 * @param webSocketClientTls the client context for dialing {@code /tls/ws} and {@code /wss}
 *     (its trust store decides which servers are accepted); empty = the JDK's default trust
 * @param connectionBudget where connections are admitted from (a node's budget: libp2p and
 *     per-IP scopes); empty = a budget of the host's own, {@link ConnectionLimits#maxConnections()}
 *     in all and no per-IP cap ({@link ConnectionBudget#standalone})
 * @param quic the QUIC transport's parameters (used for {@code /quic-v1} listen addresses and
 *     dials; its stream cap is {@link ConnectionLimits#maxStreamsPerConnection()})
 * @param inboundMemory where the bytes of decoded inbound messages waiting for their protocol
 *     are reserved ({@link Resource#MEMORY}; a node's budget: its libp2p memory surface); a
 *     refusal pauses the stream like a full inbound queue; empty = only the host's own queue
 *     limits ({@link ConnectionLimits#nodeQueuedBytes()})
 */
public record HostConfig(
    List<Multiaddr> listenAddresses,
    String agentVersion,
    Duration dialTimeout,
    int peerStoreCapacity,
    MultistreamConfig multistream,
    NoiseConfig noise,
    YamuxConfig yamux,
    IdentifyConfig identify,
    PingConfig ping,
    ConnectionLimits limits,
    ServerTlsSource webSocketTls,
    Optional<SslContext> webSocketClientTls,
    Optional<ConnectionBudget> connectionBudget,
    Optional<Scope> inboundMemory,
    QuicConfig quic) {
  public static final HostConfig DEFAULT = builder().build();

  public HostConfig {
    listenAddresses = List.copyOf(listenAddresses);
    Objects.requireNonNull(agentVersion, "agentVersion");
    requirePositive(dialTimeout, "dialTimeout");
    if (peerStoreCapacity < 1) {
      throw new IllegalArgumentException("peerStoreCapacity must be >= 1: " + peerStoreCapacity);
    }
    Objects.requireNonNull(multistream, "multistream");
    Objects.requireNonNull(noise, "noise");
    Objects.requireNonNull(yamux, "yamux");
    Objects.requireNonNull(identify, "identify");
    Objects.requireNonNull(ping, "ping");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(webSocketTls, "webSocketTls");
    Objects.requireNonNull(webSocketClientTls, "webSocketClientTls");
    Objects.requireNonNull(connectionBudget, "connectionBudget");
    Objects.requireNonNull(inboundMemory, "inboundMemory");
    Objects.requireNonNull(quic, "quic");
    webSocketClientTls.ifPresent(context -> {
      if (!context.isClient()) {
        throw new IllegalArgumentException("webSocketClientTls must be a client context");
      }
    });
  }

  /** The handshake timeout of {@link #limits()}: TLS, WebSocket, multistream, Noise, yamux. */
  public Duration upgradeTimeout() {
    return limits.handshakeTimeout();
  }

  /** The yamux settings the host uses: {@link #yamux()} with the limits' stream cap. */
  public YamuxConfig effectiveYamux() {
    return yamux.toBuilder().maxInboundStreams(limits.maxStreamsPerConnection()).build();
  }

  private static void requirePositive(final Duration value, final String name) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder().listenAddresses(listenAddresses).agentVersion(agentVersion)
        .dialTimeout(dialTimeout).peerStoreCapacity(peerStoreCapacity)
        .multistream(multistream).noise(noise).yamux(yamux).identify(identify).ping(ping)
        .limits(limits).webSocketTls(webSocketTls)
        .webSocketClientTls(webSocketClientTls.orElse(null))
        .connectionBudget(connectionBudget.orElse(null))
        .inboundMemory(inboundMemory.orElse(null)).quic(quic);
  }

  /** Validating builder; {@link #build()} checks every value. */
  public static final class Builder {
    private List<Multiaddr> listenAddresses = List.of();
    private String agentVersion = "relay-pinner";
    private Duration dialTimeout = Duration.ofSeconds(10);
    private int peerStoreCapacity = 10_000;
    private MultistreamConfig multistream = MultistreamConfig.DEFAULT;
    private NoiseConfig noise = NoiseConfig.DEFAULT;
    // One yamux frame (12-byte header + payload) per Noise message: 65519 - 12.
    private YamuxConfig yamux = YamuxConfig.builder().maxFramePayload(65_507).build();
    private IdentifyConfig identify = IdentifyConfig.DEFAULT;
    private PingConfig ping = PingConfig.DEFAULT;
    private ConnectionLimits limits = ConnectionLimits.DEFAULT;
    private ServerTlsSource webSocketTls = ServerTlsSource.NONE;
    private SslContext webSocketClientTls;
    private ConnectionBudget connectionBudget;
    private Scope inboundMemory;
    private QuicConfig quic = QuicConfig.DEFAULT;

    public Builder quic(final QuicConfig value) {
      this.quic = value;
      return this;
    }

    public Builder listenAddresses(final List<Multiaddr> value) {
      this.listenAddresses = value;
      return this;
    }

    public Builder agentVersion(final String value) {
      this.agentVersion = value;
      return this;
    }

    public Builder dialTimeout(final Duration value) {
      this.dialTimeout = value;
      return this;
    }

    /** Sets {@link ConnectionLimits#handshakeTimeout()} of the current limits. */
    public Builder upgradeTimeout(final Duration value) {
      this.limits = limits.toBuilder().handshakeTimeout(value).build();
      return this;
    }

    public Builder limits(final ConnectionLimits value) {
      this.limits = value;
      return this;
    }

    public Builder webSocketTls(final ServerTlsSource value) {
      this.webSocketTls = value;
      return this;
    }

    /** {@code null} = the JDK's default trust. */
    public Builder webSocketClientTls(final SslContext value) {
      this.webSocketClientTls = value;
      return this;
    }

    /**
     * Where connections are admitted from; {@code null} (default): the host's own,
     * {@link ConnectionLimits#maxConnections()} in all.
     */
    /** See {@link HostConfig#inboundMemory()}; null = none. */
    public Builder inboundMemory(final Scope value) {
      this.inboundMemory = value;
      return this;
    }

    public Builder connectionBudget(final ConnectionBudget value) {
      this.connectionBudget = value;
      return this;
    }

    public Builder peerStoreCapacity(final int value) {
      this.peerStoreCapacity = value;
      return this;
    }

    public Builder multistream(final MultistreamConfig value) {
      this.multistream = value;
      return this;
    }

    public Builder noise(final NoiseConfig value) {
      this.noise = value;
      return this;
    }

    public Builder yamux(final YamuxConfig value) {
      this.yamux = value;
      return this;
    }

    public Builder identify(final IdentifyConfig value) {
      this.identify = value;
      return this;
    }

    public Builder ping(final PingConfig value) {
      this.ping = value;
      return this;
    }

    public HostConfig build() {
      return new HostConfig(listenAddresses, agentVersion, dialTimeout, peerStoreCapacity,
          multistream, noise, yamux, identify, ping, limits, webSocketTls,
          Optional.ofNullable(webSocketClientTls), Optional.ofNullable(connectionBudget),
          Optional.ofNullable(inboundMemory), quic);
    }
  }
}
