package io.relaypinner.handoff.guest;

import io.relaypinner.common.Shutdown;
import io.relaypinner.multiformats.Multibase;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest's configuration state (spec 3.1): waiting for its deployment facts, then configured
 * exactly once, by whichever handoff comes first (push {@code POST /configure} or the pull agent).
 * Applying a configuration writes {@code relay.env} atomically and starts the relay in this process
 * (unless {@code no_start}); if the relay cannot start, {@code relay.env} is removed again so the
 * deployer can retry. Disk and relay start-up run on the agent's own thread, never on an event
 * loop.
 */
public final class GuestAgent implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GuestAgent.class);
  /** How long {@link #close} lets a configuration being applied finish before interrupting it. */
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(15);

  /** Where a configuration came from. */
  public enum Source {
    /** {@code POST /configure}. */
    PUSH,
    /** The pull agent (an aggregate entry of the owner). */
    PULL,
    /** {@code relay.env} written by an earlier run. */
    STORED
  }

  /** Setup state as {@code /health} reports it. */
  public enum State {
    /** No configuration yet ({@code status: waiting-for-port-mapping}, as the images say). */
    WAITING,
    /** A configuration is being applied. */
    CONFIGURING,
    /** Configured (and the relay started unless {@code no_start}). */
    CONFIGURED
  }

  /**
   * A configuration in force.
   *
   * @param config the facts
   * @param source where they came from
   * @param relay the relay started with them (empty with {@code no_start})
   * @param addresses the addresses predicted from the facts
   */
  public record Configured(ConfigureRequest config, Source source, Optional<RunningRelay> relay,
      GuestAddresses addresses) {}

  /**
   * Settings of the guest itself (not of the deployment).
   *
   * @param internalTcpPort the relay's {@code RELAY_TCP_PORT} (9091 by default)
   * @param internalWsPort the relay's {@code RELAY_WS_PORT} (9092 by default)
   * @param internalQuicPort the relay's {@code RELAY_QUIC_PORT} (9094 by default), or -1 with
   *     {@code RELAY_DISABLE_QUIC}
   * @param autoTlsDomain {@code RELAY_AUTOTLS_DOMAIN} ({@code libp2p.direct})
   * @param profile the image profile reported in records ({@code orbitdb-relay})
   */
  public record Settings(int internalTcpPort, int internalWsPort, int internalQuicPort,
      String autoTlsDomain, String profile) {
    public static final Settings DEFAULT = new Settings(9091, 9092, 9094, "libp2p.direct",
        "orbitdb-relay");

    /** The guest's settings from the process environment (the same variables the relay reads). */
    public static Settings fromEnvironment(final Map<String, String> env) {
      final boolean quicOff = Optional.ofNullable(env.get("RELAY_DISABLE_QUIC"))
          .map(v -> v.strip().toLowerCase(java.util.Locale.ROOT))
          .filter(v -> v.equals("true") || v.equals("1") || v.equals("yes") || v.equals("on"))
          .isPresent();
      return new Settings(port(env, "RELAY_TCP_PORT", 9091), port(env, "RELAY_WS_PORT", 9092),
          quicOff ? -1 : port(env, "RELAY_QUIC_PORT", 9094),
          Optional.ofNullable(env.get("RELAY_AUTOTLS_DOMAIN")).filter(s -> !s.isBlank())
              .orElse("libp2p.direct"),
          Optional.ofNullable(env.get("ALEPH_BOOTSTRAP_PROFILE")).filter(s -> !s.isBlank())
              .orElse("orbitdb-relay"));
    }

    private static int port(final Map<String, String> env, final String name, final int dflt) {
      final String value = env.get(name);
      try {
        return value == null || value.isBlank() ? dflt : Integer.parseInt(value.strip());
      } catch (final NumberFormatException e) {
        return dflt;
      }
    }
  }

  private final GuestStateDir state;
  private final RelayLauncher launcher;
  private final Settings settings;
  private final Clock clock;
  private final ExecutorService worker;
  private final List<Consumer<Configured>> listeners = new CopyOnWriteArrayList<>();

  private State current = State.WAITING;
  private Configured configured;
  private boolean closed;

  public GuestAgent(final GuestStateDir state, final RelayLauncher launcher,
      final Settings settings, final Clock clock) {
    this.state = Objects.requireNonNull(state, "state");
    this.launcher = Objects.requireNonNull(launcher, "launcher");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.worker = Executors.newSingleThreadExecutor(r -> {
      final Thread thread = new Thread(r, "guest-configure");
      thread.setDaemon(true);
      return thread;
    });
  }

  public GuestStateDir state() {
    return state;
  }

  public Settings settings() {
    return settings;
  }

  /** Called on the agent's thread after each configuration or owner-authorization change. */
  public void onConfigured(final Consumer<Configured> listener) {
    listeners.add(listener);
  }

  public synchronized State currentState() {
    return current;
  }

  public synchronized Optional<Configured> configured() {
    return Optional.ofNullable(configured);
  }

  /**
   * Applies a configuration once. Completes with the result, or exceptionally with a
   * {@link ConfigureRejectedException} ({@code already_configured}, {@code configuring}) or
   * another exception when the relay could not start (then nothing stays written).
   */
  public CompletableFuture<Configured> configure(final ConfigureRequest request,
      final Source source) {
    synchronized (this) {
      if (closed) {
        return CompletableFuture.failedFuture(
            new ConfigureRejectedException("shutting_down", "the guest is shutting down"));
      }
      if (current == State.CONFIGURED) {
        return CompletableFuture.failedFuture(new ConfigureRejectedException(
            "already_configured", "this guest is already configured (by "
                + configured.source().name().toLowerCase(Locale.ROOT) + "); configuration is "
                + "closed"));
      }
      if (current == State.CONFIGURING) {
        return CompletableFuture.failedFuture(new ConfigureRejectedException("configuring",
            "another configuration of this guest is being applied"));
      }
      current = State.CONFIGURING;
    }
    final CompletableFuture<Configured> result = new CompletableFuture<>();
    worker.execute(() -> {
      try {
        final Configured done = apply(request, source);
        synchronized (this) {
          configured = done;
          current = State.CONFIGURED;
        }
        result.complete(done);
        notifyListeners(done);
      } catch (final Exception e) {
        synchronized (this) {
          current = State.WAITING;
        }
        result.completeExceptionally(e);
      }
    });
    return result;
  }

  private Configured apply(final ConfigureRequest supplied, final Source source)
      throws Exception {
    ConfigureRequest request = supplied.withoutPublisherKey();
    if (source != Source.STORED) {
      // Spec 2.9: the publisher key becomes the one in use before anything is signed with it.
      final List<String> keyWarnings = state.adoptPublisherKey(supplied.publisherKey());
      if (!keyWarnings.isEmpty()) {
        final List<String> all = new ArrayList<>(request.warnings());
        all.addAll(keyWarnings);
        request = new ConfigureRequest(request.publicIpv4(), request.publicIpv6(),
            request.proxyHostname(), request.tcpPort(), request.wsPort(), request.metricsPort(),
            request.metricsHttpsPort(), request.webrtcPort(), request.quicPort(),
            request.registrationId(), request.ownerAddress(), request.ownerAuthorizationB64(),
            request.noStart(), Optional.empty(), all);
      }
    }
    for (final String warning : request.warnings()) {
      LOG.warn("configuration ({}): {}", source, warning);
    }
    if (source != Source.STORED) {
      RelayEnvFile.write(state.envFile(), request.toEnvironment(state.dataDir()),
          "written by relay-pinner guest (" + source.name().toLowerCase(Locale.ROOT) + ") at "
              + Instant.now(clock) + "\nread by: relay-pinner run --env-file " + state.envFile());
    }
    final String peerId = state.relayPeerId().toBase58();
    Optional<RunningRelay> relay = Optional.empty();
    if (!request.noStart()) {
      try {
        final RunningRelay started = launcher.start(state.envFile());
        relay = Optional.of(started);
        if (!started.peerId().equals(peerId)) {
          throw new IllegalStateException("the relay started as " + started.peerId() + ", not as "
              + peerId + " (the guest's identity): is RELAY_PRIV_KEY or DATASTORE_PATH set in "
              + "the environment?");
        }
      } catch (final Exception e) {
        relay.ifPresent(RunningRelay::close);
        if (source != Source.STORED) {
          Files.deleteIfExists(state.envFile());
        }
        LOG.error("the relay did not start: {}", e.getMessage());
        throw e;
      }
    }
    LOG.info("configured by {}: public {} tcp {} ws {}{}{}",
        source.name().toLowerCase(Locale.ROOT), request.publicIpv4(), request.tcpPort(),
        request.wsPort(), request.proxyHostname().map(h -> " proxy " + h).orElse(""),
        request.noStart() ? " (no_start: relay not started)" : "");
    return new Configured(request, source, relay, GuestAddresses.predict(request, peerId,
        settings.internalTcpPort(), settings.internalWsPort(), settings.internalQuicPort()));
  }

  /**
   * Records an owner authorization that arrived after the configuration (pull: a later aggregate
   * entry). It is written to {@code relay.env} and listeners are told; the relay keeps running.
   *
   * @throws IllegalStateException when the guest is not configured
   */
  public CompletableFuture<Configured> applyOwnerAuthorization(final String b64,
      final String ownerAddress) {
    final CompletableFuture<Configured> result = new CompletableFuture<>();
    worker.execute(() -> {
      try {
        final Configured before = configured().orElseThrow(
            () -> new IllegalStateException("not configured"));
        final ConfigureRequest updated = before.config().withOwnerAuthorization(b64, ownerAddress);
        RelayEnvFile.write(state.envFile(), updated.toEnvironment(state.dataDir()),
            "written by relay-pinner guest (owner authorization) at " + Instant.now(clock)
                + "\nread by: relay-pinner run --env-file " + state.envFile());
        final Configured after = new Configured(updated, before.source(), before.relay(),
            before.addresses());
        synchronized (this) {
          configured = after;
        }
        LOG.info("owner authorization of {} applied", ownerAddress);
        result.complete(after);
        notifyListeners(after);
      } catch (final Exception e) {
        result.completeExceptionally(e);
      }
    });
    return result;
  }

  private void notifyListeners(final Configured done) {
    for (final Consumer<Configured> listener : listeners) {
      try {
        listener.accept(done);
      } catch (final RuntimeException e) {
        LOG.error("configuration listener failed", e);
      }
    }
  }

  /** {@code GET /health} of the setup server (notes 2.2 shape, with the real state). */
  public Map<String, Object> health() {
    final State now = currentState();
    final Map<String, Object> body = new LinkedHashMap<>();
    body.put("status", switch (now) {
      case WAITING -> "waiting-for-port-mapping";
      case CONFIGURING -> "configuring";
      case CONFIGURED -> "configured";
    });
    body.put("ready", now == State.CONFIGURED);
    body.put("env_file", state.envFile().toString());
    body.put("metadata_ready", true);
    body.put("peer_id", state.relayPeerId().toBase58());
    body.put("bootstrap_publisher_address", state.publisherKey().address());
    return body;
  }

  /**
   * The guest's metadata (notes 2.5 field names): its identities as soon as the keys exist, its
   * addresses once configured.
   */
  public Map<String, Object> metadata() {
    final Optional<Configured> now = configured();
    final String peerId = state.relayPeerId().toBase58();
    final GuestAddresses predicted = now.map(Configured::addresses).orElse(GuestAddresses.NONE);
    final List<String> listening = new ArrayList<>();
    now.flatMap(Configured::relay).ifPresent(relay -> listening.addAll(relay.multiaddrs()));
    final Map<String, Object> m = new LinkedHashMap<>();
    m.put("peer_id", peerId);
    m.put("bootstrap_publisher_address", state.publisherKey().address());
    m.put("profile", settings.profile());
    m.put("configured", now.isPresent());
    m.put("configuration", now.map(c -> (Object) c.config().publicFacts()).orElse(null));
    m.put("announce_addrs", predicted.all().stream()
        .map(a -> a.substring(0, a.lastIndexOf("/p2p/"))).toList());
    m.put("listening_addrs", listening);
    m.put("auto_tls_serving_zone", state.relayPeerId().toCid().toString(Multibase.Base.BASE36)
        + "." + settings.autoTlsDomain());
    m.put("metrics_https", null);
    final Map<String, Object> byTransport = new LinkedHashMap<>();
    byTransport.put("webrtc", List.of());
    byTransport.put("tcp", predicted.directTcp());
    byTransport.put("websocket", predicted.websocket());
    byTransport.put("quic", predicted.quic());
    m.put("by_transport", byTransport);
    m.put("direct_tcp_multiaddrs", predicted.directTcp());
    m.put("autotls_wss_multiaddrs", List.of());
    m.put("proxy_wss_multiaddrs", predicted.proxyWss());
    m.put("plain_ws_multiaddrs", predicted.plainWs());
    m.put("quic_multiaddrs", predicted.quic());
    m.put("webtransport_multiaddrs", List.of());
    m.put("webrtc_direct_multiaddrs", List.of());
    m.put("browser_bootstrap_multiaddrs", predicted.browserBootstrap());
    m.put("probe_multiaddrs", predicted.probe());
    return m;
  }

  /**
   * A guest restarted after it was configured: starts the relay with the stored
   * {@code relay.env} (no setup window opens again).
   */
  public CompletableFuture<Configured> resumeStored() {
    final ConfigureRequest stored;
    try {
      stored = ConfigureRequest.fromEnvironment(RelayEnvFile.read(state.envFile()));
    } catch (final IOException | ConfigureRejectedException e) {
      return CompletableFuture.failedFuture(new IllegalStateException(state.envFile()
          + " does not hold a valid configuration: " + e.getMessage(), e));
    }
    return configure(stored, Source.STORED);
  }

  /** Stops the relay this agent started (bounded). */
  @Override
  public void close() {
    final Configured last;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      last = configured;
    }
    Shutdown.shutdownGracefully(worker, CLOSE_WAIT, false, "guest agent worker");
    final Configured finalState = configured().orElse(last);
    if (finalState != null) {
      finalState.relay().ifPresent(RunningRelay::close);
    }
  }
}
