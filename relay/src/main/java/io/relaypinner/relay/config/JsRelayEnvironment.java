package io.relaypinner.relay.config;

import io.relaypinner.relay.config.EnvReader.Value;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every environment variable orbitdb-relay 0.10.8 documents (its
 * {@code reference/environment-variables.md} and {@code .env.example}), in one table, and what
 * relay-pinner does with each, so that a JS relay's environment is a drop-in: a variable is read
 * with the same meaning (under its own name, or as an alias of ours), or start-up stops with exit 2
 * and a message naming our equivalent or saying it is not supported. Nothing is silently ignored:
 * a variable accepted without an effect here logs one INFO line saying why. docs/migrating.md is
 * the table for operators.
 *
 * <p>{@link RelayConfig#fromEnvironment} reads the {@link Kind#SAME} and {@link Kind#ALIAS} names
 * where it reads ours; {@link #apply} does the rest once the environment is read, and refuses
 * every unsupported setting at once (one message listing them all).
 */
public final class JsRelayEnvironment {
  private static final Logger LOG = LoggerFactory.getLogger(JsRelayEnvironment.class);

  /** What relay-pinner does with a variable. */
  public enum Kind {
    /** The same name, the same meaning (read by {@link RelayConfig#fromEnvironment}). */
    SAME,
    /** Another name of one of ours (read by {@link RelayConfig#fromEnvironment}). */
    ALIAS,
    /** Applied here ({@link #apply}): mapped onto our settings. */
    MAPPED,
    /** A switch accepted only when it asks for what relay-pinner does anyway (a feature off). */
    OFF_ONLY,
    /** Checked, accepted, and without an effect here (logged once, saying why). */
    NO_EFFECT,
    /** Refused at start whenever set. */
    REFUSED
  }

  /**
   * One variable of orbitdb-relay.
   *
   * @param ours our variable of the same meaning, or empty
   * @param note what differs, or why it is refused or has no effect
   */
  public record Variable(String name, Kind kind, String ours, String note) {}

  private static final String WEBRTC = "relay-pinner has no WebRTC-direct listener; browsers "
      + "reach each other with WebRTC through its circuit relay";
  private static final String DEBUG_PROTOCOLS = "orbitdb-relay's connectivity test protocols "
      + "are not in relay-pinner";

  /** The table, in the order of orbitdb-relay's environment-variables.md. */
  public static final List<Variable> VARIABLES = List.of(
      // Listeners & transports
      same("RELAY_TCP_PORT", ""),
      same("RELAY_WS_PORT", "with a certificate the same port also accepts TLS (/tls/ws)"),
      new Variable("RELAY_WEBRTC_PORT", Kind.OFF_ONLY, "",
          WEBRTC + "; accepted only with RELAY_DISABLE_WEBRTC=true"),
      same("RELAY_QUIC_PORT", "UDP, same default (9094); IPv4 and IPv6 listeners as the TCP "
          + "ones"),
      same("RELAY_LISTEN_IPV4", ""),
      same("RELAY_LISTEN_IPV6", ""),
      same("RELAY_DISABLE_IPV6", ""),
      same("RELAY_DISABLE_QUIC", "true: no QUIC listeners (relay-pinner still dials QUIC "
          + "addresses)"),
      new Variable("RELAY_DISABLE_WEBRTC", Kind.OFF_ONLY, "", WEBRTC + "; only true is accepted"),
      same("RELAY_DISABLE_BOOTSTRAP", "true: no bootstrap dials. relay-pinner has no built-in "
          + "public bootstrap list: it dials RELAY_BOOTSTRAP_PEERS (empty by default)"),
      new Variable("RELAY_DISABLE_AUTONAT", Kind.MAPPED, "",
          "true: no AutoNAT v1 server (relay-pinner runs one by default, as orbitdb-relay)"),
      new Variable("RELAY_DISABLE_DHT", Kind.MAPPED, "RELAY_DHT_MODE",
          "true: RELAY_DHT_MODE=off; false: the DHT runs (RELAY_DHT_MODE, default client). "
              + "Refused when it contradicts RELAY_DHT_MODE"),
      same("RELAY_MAX_CONNECTIONS", "half-open connections count too"),
      alias("VITE_APPEND_ANNOUNCE", "RELAY_ANNOUNCE", "the /tls/ws twins of /ws addresses "
          + "are added while a certificate is available"),
      new Variable("VITE_APPEND_ANNOUNCE_DEV", Kind.MAPPED, "RELAY_ANNOUNCE",
          "read instead of VITE_APPEND_ANNOUNCE when NODE_ENV=development, as orbitdb-relay; "
              + "otherwise not read (logged)"),
      new Variable("NODE_ENV", Kind.MAPPED, "",
          "development selects VITE_APPEND_ANNOUNCE_DEV; other values change nothing, as in "
              + "orbitdb-relay"),
      // TLS
      same("disableAutoTLS", "any value but false/0/no/off disables AutoTLS"),
      same("STAGING", "Let's Encrypt staging directory"),
      // Discovery & identity
      same("PUBSUB_TOPICS", ""),
      alias("VITE_PUBSUB_TOPICS", "PUBSUB_TOPICS", "read when PUBSUB_TOPICS is unset"),
      new Variable("RELAY_REQUIRE_ORBITDB_HEADS_PROTOCOL", Kind.OFF_ONLY,
          "RELAY_MAX_CONNECTIONS_PER_IP", "relay-pinner does not disconnect peers without an "
              + "/orbitdb/heads protocol (browsers use its circuit relay and pubsub); it bounds "
              + "peers per IP instead. Only false is accepted"),
      same("RELAY_PRIV_KEY", "the key is not written into the data directory"),
      new Variable("TEST_PRIVATE_KEY", Kind.REFUSED, "RELAY_PRIV_KEY",
          "orbitdb-relay reads it only with --test; relay-pinner has no test mode: set "
              + "RELAY_PRIV_KEY"),
      // Storage
      same("DATASTORE_PATH", "relay-pinner's own layout: give it a new directory, it cannot "
          + "read orbitdb-relay's LevelDB stores (docs/migrating.md)"),
      alias("RELAY_DATASTORE_PATH", "DATASTORE_PATH", "read when DATASTORE_PATH is unset"),
      // Circuit relay v2
      same("RELAY_CIRCUIT_HOP_TIMEOUT_MS", "same default (300000)"),
      same("RELAY_CIRCUIT_MAX_RESERVATIONS", "same default (10000); relay-pinner also holds at "
          + "most 64 per IP"),
      same("RELAY_CIRCUIT_RESERVATION_TTL_MS", "same default (72000000)"),
      same("RELAY_CIRCUIT_DEFAULT_DATA_LIMIT_BYTES", "same default (10737418240)"),
      same("RELAY_CIRCUIT_DEFAULT_DURATION_LIMIT_MS", "same default (1200000)"),
      // Metrics & HTTP
      same("METRICS_PORT", ""),
      same("METRICS_DISABLED", ""),
      same("METRICS_HTTPS_ENABLED", ""),
      same("METRICS_HTTPS_PORT", ""),
      same("METRICS_HTTPS_PUBLIC_HOST", "must be one label under the serving zone"),
      same("EXTERNAL_METRICS_HTTPS_PORT", ""),
      same("METRICS_CORS_ORIGIN", ""),
      same("METRICS_CORS_ALLOW_HEADERS", ""),
      same("METRICS_CORS_MAX_AGE", ""),
      alias("RELAY_IPFS_CAT_TIMEOUT_MS", "RELAY_IPFS_FALLBACK_TIMEOUT_MS",
          "the /ipfs/ network fallback's time limit; default 60000 (orbitdb-relay: 120000)"),
      same("RELAY_PINNING_SYNC_TIMEOUT_MS", "default 30000 (orbitdb-relay: 120000); it also "
          + "bounds how long any sync holds a slot"),
      new Variable("RELAY_ORBITDB_SUBSCRIBE_TIMEOUT_MS", Kind.NO_EFFECT, "",
          "relay-pinner subscribes to a topic locally, without waiting on the network, so a "
              + "subscribe never runs into this bound"),
      new Variable("RELAY_ORBITDB_SYNC_TIMEOUT_MS", Kind.MAPPED,
          "RELAY_PINNING_SYNC_TIMEOUT_MS", "relay-pinner has one sync timeout for the HTTP wait "
              + "and the slot: accepted when it equals RELAY_PINNING_SYNC_TIMEOUT_MS (or that "
              + "is unset: then it sets it), refused otherwise"),
      same("RELAY_ORBITDB_SYNC_COOLDOWN_MS", "a failed sync is queued again when its cooldown "
          + "ends, then after doubling delays up to 30 min"),
      new Variable("RELAY_ORBITDB_SYNC_MAX_COOLDOWN_MS", Kind.REFUSED,
          "RELAY_ORBITDB_SYNC_COOLDOWN_MS", "relay-pinner's doubling retry delays end at a "
              + "fixed 30 min, not settable; set the first one with "
              + "RELAY_ORBITDB_SYNC_COOLDOWN_MS"),
      // Deployed-mode indicators
      same("PROXY_HOSTNAME", "deployed mode; also advertises /dns4/<host>/tcp/<port>/tls/ws"),
      same("PUBLIC_IPV4", "deployed mode; also advertises /ip4/<ip>/tcp/<port>[/ws]"),
      same("PUBLIC_IPV6", "advertises /ip6/<ip>/... in deployed mode"),
      alias("EXTERNAL_TCP_PORT", "EXTERNAL_RELAY_TCP_PORT", "deployed mode, as in "
          + "orbitdb-relay; also the port of the PUBLIC_IPV4 TCP address relay-pinner adds"),
      alias("EXTERNAL_WS_PORT", "EXTERNAL_RELAY_WS_PORT", "deployed mode, as in orbitdb-relay; "
          + "also the port of the PUBLIC_IPV4 and PROXY_HOSTNAME WebSocket addresses"),
      alias("EXTERNAL_WEBRTC_PORT", "EXTERNAL_RELAY_WEBRTC_PORT", "deployed mode"),
      alias("EXTERNAL_QUIC_PORT", "EXTERNAL_RELAY_QUIC_PORT", "deployed mode; also the port of "
          + "the PUBLIC_IPV4 QUIC address relay-pinner adds"),
      // Connectivity debug protocols
      new Variable("RELAY_CONNECTIVITY_ECHO_ENABLED", Kind.OFF_ONLY, "",
          DEBUG_PROTOCOLS + "; only false is accepted"),
      new Variable("RELAY_CONNECTIVITY_BULK_ENABLED", Kind.OFF_ONLY, "",
          DEBUG_PROTOCOLS + "; only false is accepted"),
      new Variable("RELAY_CONNECTIVITY_BULK_MAX_FRAME_BYTES", Kind.NO_EFFECT, "",
          "tunes a protocol that is off (RELAY_CONNECTIVITY_BULK_ENABLED)"),
      new Variable("RELAY_CONNECTIVITY_BULK_READ_TIMEOUT_MS", Kind.NO_EFFECT, "",
          "tunes a protocol that is off (RELAY_CONNECTIVITY_BULK_ENABLED)"),
      new Variable("RELAY_CONNECTIVITY_BULK_IDLE_TIMEOUT_MS", Kind.NO_EFFECT, "",
          "tunes a protocol that is off (RELAY_CONNECTIVITY_BULK_ENABLED)"),
      // Runtime
      new Variable("RELAY_STOP_TIMEOUT_MS", Kind.REFUSED, "",
          "relay-pinner's shutdown is bounded by its own timeouts (every part closes within "
              + "seconds); not settable"),
      // Logging: switches onto our logger categories (LOG_LEVEL stays the base level)
      new Variable("ENABLE_GENERAL_LOGS", Kind.NO_EFFECT, "LOG_LEVEL",
          "start-up lines (peer id, addresses): relay-pinner logs them at INFO anyway"),
      new Variable("ENABLE_SYNC_LOGS", Kind.MAPPED, "LOG_LEVEL",
          "true: DEBUG for io.relaypinner.relay.sync, .replication, .pubsub"),
      new Variable("ENABLE_SYNC_STATS", Kind.MAPPED, "LOG_LEVEL",
          "true: DEBUG for io.relaypinner.relay.sync"),
      new Variable("ENABLE_HEADS_STREAM_LOGS", Kind.MAPPED, "LOG_LEVEL",
          "true: DEBUG for io.relaypinner.orbitdb.heads (orbitdb-relay's default is on; "
              + "relay-pinner's heads lines are DEBUG, so unset means off)"),
      new Variable("LOG_LEVEL_CONNECTION", Kind.MAPPED, "LOG_LEVEL",
          "true: DEBUG for io.relaypinner.libp2p.host"),
      new Variable("LOG_LEVEL_PEER", Kind.MAPPED, "LOG_LEVEL",
          "true: DEBUG for io.relaypinner.libp2p"),
      new Variable("LOG_LEVEL_DATABASE", Kind.MAPPED, "LOG_LEVEL",
          "true: INFO for io.relaypinner.relay.replication and .sync (failed syncs and pins "
              + "are WARN lines anyway)"),
      new Variable("LOG_LEVEL_SYNC", Kind.MAPPED, "LOG_LEVEL",
          "true: DEBUG for io.relaypinner.relay.sync"),
      new Variable("LOG_LEVEL_BLOCK_FETCH", Kind.MAPPED, "LOG_LEVEL",
          "true: DEBUG for io.relaypinner.ipfs.bitswap and io.relaypinner.orbitdb.log"),
      new Variable("DEBUG", Kind.MAPPED, "LOG_LEVEL", "debug namespaces: * is DEBUG for "
          + "io.relaypinner, le-space:relay* for io.relaypinner.relay, libp2p* for "
          + "io.relaypinner.libp2p; other namespaces match nothing here (logged)"));

  /** Logger categories of the logging switches (true: this level). */
  private static final Map<String, Map<String, LogLevel>> LOG_SWITCHES = Map.of(
      "ENABLE_SYNC_LOGS", levels(LogLevel.DEBUG, "io.relaypinner.relay.sync",
          "io.relaypinner.relay.replication", "io.relaypinner.relay.pubsub"),
      "ENABLE_SYNC_STATS", levels(LogLevel.DEBUG, "io.relaypinner.relay.sync"),
      "ENABLE_HEADS_STREAM_LOGS", levels(LogLevel.DEBUG, "io.relaypinner.orbitdb.heads"),
      "LOG_LEVEL_CONNECTION", levels(LogLevel.DEBUG, "io.relaypinner.libp2p.host"),
      "LOG_LEVEL_PEER", levels(LogLevel.DEBUG, "io.relaypinner.libp2p"),
      "LOG_LEVEL_DATABASE", levels(LogLevel.INFO, "io.relaypinner.relay.replication",
          "io.relaypinner.relay.sync"),
      "LOG_LEVEL_SYNC", levels(LogLevel.DEBUG, "io.relaypinner.relay.sync"),
      "LOG_LEVEL_BLOCK_FETCH", levels(LogLevel.DEBUG, "io.relaypinner.ipfs.bitswap",
          "io.relaypinner.orbitdb.log"));

  private JsRelayEnvironment() {}

  private static Variable same(final String name, final String note) {
    return new Variable(name, Kind.SAME, name, note);
  }

  private static Variable alias(final String name, final String ours, final String note) {
    return new Variable(name, Kind.ALIAS, ours, note);
  }

  private static Map<String, LogLevel> levels(final LogLevel level, final String... loggers) {
    final Map<String, LogLevel> out = new LinkedHashMap<>();
    for (final String logger : loggers) {
      out.put(logger, level);
    }
    return out;
  }

  /** The variable of {@code name}, if orbitdb-relay documents it. */
  public static Optional<Variable> find(final String name) {
    return VARIABLES.stream().filter(v -> v.name().equals(name)).findFirst();
  }

  /**
   * The alias {@code RELAY_ANNOUNCE} has: {@code VITE_APPEND_ANNOUNCE}, or
   * {@code VITE_APPEND_ANNOUNCE_DEV} when {@code NODE_ENV=development} (orbitdb-relay reads it
   * instead then).
   */
  static String announceAlias(final EnvReader in) {
    return development(in) ? "VITE_APPEND_ANNOUNCE_DEV" : "VITE_APPEND_ANNOUNCE";
  }

  private static boolean development(final EnvReader in) {
    return in.get("NODE_ENV").map(v -> v.text().equals("development")).orElse(false);
  }

  /**
   * Applies the {@link Kind#MAPPED} variables to {@code b}, checks the others and logs those
   * without an effect.
   *
   * @throws InvalidConfigException naming the first refused variable, with a message listing
   *     every refused one and what to set instead
   */
  static void apply(final EnvReader in, final RelayConfig.Builder b) {
    final Map<String, String> refused = new LinkedHashMap<>();
    final List<String> noEffect = new ArrayList<>();
    // Switches accepted only when they ask for a feature relay-pinner does not have to be off.
    offOnly(in, "RELAY_DISABLE_WEBRTC", true, refused);
    offOnly(in, "RELAY_REQUIRE_ORBITDB_HEADS_PROTOCOL", false, refused);
    offOnly(in, "RELAY_CONNECTIVITY_ECHO_ENABLED", false, refused);
    offOnly(in, "RELAY_CONNECTIVITY_BULK_ENABLED", false, refused);
    portWhenOff(in, "RELAY_WEBRTC_PORT", "RELAY_DISABLE_WEBRTC", refused);
    for (final String name : List.of("TEST_PRIVATE_KEY", "RELAY_ORBITDB_SYNC_MAX_COOLDOWN_MS",
        "RELAY_STOP_TIMEOUT_MS")) {
      if (in.get(name).isPresent()) {
        refused.put(name, note(name));
      }
    }

    in.get("RELAY_DISABLE_AUTONAT").map(EnvReader::bool).ifPresent(b::autoNatDisabled);
    in.get("RELAY_DISABLE_DHT").ifPresent(v -> {
      final boolean disabled = EnvReader.bool(v);
      final Optional<Value> mode = in.get("RELAY_DHT_MODE");
      if (mode.isEmpty()) {
        if (disabled) {
          b.dhtMode(DhtMode.OFF);
        }
      } else if (disabled != (b.dhtMode() == DhtMode.OFF)) {
        refused.put(v.variable(), "contradicts RELAY_DHT_MODE=" + mode.get().text()
            + "; set only RELAY_DHT_MODE (off, client, server or auto)");
      }
    });
    if (in.get("VITE_APPEND_ANNOUNCE_DEV").isPresent() && !development(in)) {
      noEffect.add("VITE_APPEND_ANNOUNCE_DEV (read only when NODE_ENV=development, as "
          + "orbitdb-relay)");
    }
    in.get("RELAY_ORBITDB_SYNC_TIMEOUT_MS").ifPresent(v -> {
      final Duration slot = EnvReader.millis(v, 1, SyncConfig.MAX_TIMEOUT_MS);
      if (in.get("RELAY_PINNING_SYNC_TIMEOUT_MS").isEmpty()) {
        b.pinningSyncTimeout(slot);
      } else if (!slot.equals(b.pinningSyncTimeout())) {
        refused.put(v.variable(), "relay-pinner has one sync timeout for the HTTP wait and the "
            + "slot, RELAY_PINNING_SYNC_TIMEOUT_MS (" + b.pinningSyncTimeout().toMillis()
            + " ms here); set both alike or only RELAY_PINNING_SYNC_TIMEOUT_MS");
      }
    });
    for (final String name : List.of("RELAY_ORBITDB_SUBSCRIBE_TIMEOUT_MS",
        "RELAY_CONNECTIVITY_BULK_MAX_FRAME_BYTES", "RELAY_CONNECTIVITY_BULK_READ_TIMEOUT_MS",
        "RELAY_CONNECTIVITY_BULK_IDLE_TIMEOUT_MS")) {
      in.get(name).ifPresent(v -> {
        EnvReader.integer(v, 0, Long.MAX_VALUE, "a non-negative integer");
        noEffect.add(name + " (" + note(name) + ")");
      });
    }
    logging(in, b, noEffect);

    for (final String line : noEffect) {
      LOG.info("orbitdb-relay setting accepted without an effect here: {}", line);
    }
    if (!refused.isEmpty()) {
      final StringBuilder message = new StringBuilder(refused.size() == 1
          ? "an orbitdb-relay setting relay-pinner does not support (docs/migrating.md):"
          : refused.size() + " orbitdb-relay settings relay-pinner does not support "
              + "(docs/migrating.md):");
      refused.forEach((name, why) -> message.append(System.lineSeparator()).append("  ")
          .append(name).append('=').append(shown(in, name)).append(": ").append(why));
      throw new InvalidConfigException(refused.keySet().iterator().next(), message.toString());
    }
  }

  private static void logging(final EnvReader in, final RelayConfig.Builder b,
      final List<String> noEffect) {
    LOG_SWITCHES.forEach((name, loggers) -> in.get(name).ifPresent(v -> {
      if (EnvReader.bool(v)) {
        loggers.forEach(b::loggerLevel);
      }
    }));
    in.get("ENABLE_GENERAL_LOGS").map(EnvReader::bool).filter(on -> on)
        .ifPresent(on -> noEffect.add("ENABLE_GENERAL_LOGS (" + note("ENABLE_GENERAL_LOGS")
            + ")"));
    in.get("DEBUG").ifPresent(v -> {
      for (final String raw : v.text().split("[,\\s]+")) {
        final String namespace = raw.strip();
        if (namespace.isEmpty() || namespace.startsWith("-")) {
          continue;
        }
        if (namespace.equals("*")) {
          b.loggerLevel("io.relaypinner", LogLevel.DEBUG);
        } else if (namespace.startsWith("le-space:relay") || namespace.equals("le-space:*")) {
          b.loggerLevel("io.relaypinner.relay", LogLevel.DEBUG);
        } else if (namespace.startsWith("libp2p")) {
          b.loggerLevel("io.relaypinner.libp2p", LogLevel.DEBUG);
        } else {
          noEffect.add("DEBUG namespace " + namespace + " (no logger of relay-pinner matches)");
        }
      }
    });
  }

  /**
   * A switch that may only ask for the feature to be off: {@code off} is the value that does.
   */
  private static void offOnly(final EnvReader in, final String name, final boolean off,
      final Map<String, String> refused) {
    in.get(name).ifPresent(v -> {
      if (EnvReader.bool(v) != off) {
        refused.put(name, note(name));
      }
    });
  }

  /** A listener port of a transport relay-pinner lacks: only with its disable switch true. */
  private static void portWhenOff(final EnvReader in, final String name, final String disable,
      final Map<String, String> refused) {
    in.get(name).ifPresent(v -> {
      EnvReader.port(v);
      if (!in.get(disable).map(EnvReader::bool).orElse(false)) {
        refused.put(name, note(name));
      }
    });
  }

  private static String note(final String name) {
    return find(name).map(Variable::note).orElseThrow();
  }

  /** The value as set, for the message; secrets (TEST_PRIVATE_KEY) are not shown. */
  private static String shown(final EnvReader in, final String name) {
    if (name.toLowerCase(Locale.ROOT).contains("key")) {
      return "(not shown)";
    }
    return in.get(name).map(Value::text).orElse("");
  }
}
