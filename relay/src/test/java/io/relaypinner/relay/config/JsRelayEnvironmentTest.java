package io.relaypinner.relay.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.relay.config.JsRelayEnvironment.Kind;
import io.relaypinner.relay.config.JsRelayEnvironment.Variable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The drop-in for orbitdb-relay 0.10.8's environment (issue 37): every variable its
 * environment-variables.md and .env.example name is in {@link JsRelayEnvironment#VARIABLES}, and
 * the example .env with every value uncommented (its Nym preset too, {@code PUBLIC_IP} set as it
 * says) is read variable by variable: each takes effect on the configuration or stops start-up
 * with a message naming it. The files are copies of orbitdb-relay's (MIT), under
 * {@code src/test/resources/orbitdb-relay-0.10.8}.
 */
class JsRelayEnvironmentTest {
  private static final Path JS = Path.of("src/test/resources/orbitdb-relay-0.10.8");
  /** A commented assignment of the example: {@code # NAME=value} or {@code # Optional: NAME=v}. */
  private static final Pattern ASSIGNMENT =
      Pattern.compile("^#\\s*(?:Optional:\\s*)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$");
  /** A variable in the first column of a table of environment-variables.md. */
  private static final Pattern TABLE_ROW = Pattern.compile("^\\| `([A-Za-z_][A-Za-z0-9_]*)` \\|");
  private static final String PUBLIC_IP = "203.0.113.8";

  /** Every assignment of the example .env, in order, values as written (PUBLIC_IP set). */
  static List<Map.Entry<String, String>> exampleAssignments() throws IOException {
    final List<Map.Entry<String, String>> out = new ArrayList<>();
    for (final String line : Files.readAllLines(JS.resolve("env.example"))) {
      final Matcher m = ASSIGNMENT.matcher(line.strip());
      if (m.matches()) {
        out.add(Map.entry(m.group(1), m.group(2).replace("PUBLIC_IP", PUBLIC_IP)));
      }
    }
    return out;
  }

  /** The example .env uncommented, as a process would see it: a later line wins. */
  static Map<String, String> exampleEnvironment() throws IOException {
    final Map<String, String> env = new LinkedHashMap<>();
    exampleAssignments().forEach(e -> env.put(e.getKey(), e.getValue()));
    return env;
  }

  @Test
  void table_shouldNameEveryVariableTheJsRelayDocuments_once() throws IOException {
    final Set<String> documented = new LinkedHashSet<>();
    for (final String line : Files.readAllLines(JS.resolve("environment-variables.md"))) {
      final Matcher m = TABLE_ROW.matcher(line);
      if (m.find()) {
        documented.add(m.group(1));
      }
    }
    exampleAssignments().forEach(e -> documented.add(e.getKey()));
    assertThat(documented).hasSizeGreaterThan(60);
    final List<String> names = JsRelayEnvironment.VARIABLES.stream().map(Variable::name).toList();
    assertThat(names).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(documented);
    for (final Variable v : JsRelayEnvironment.VARIABLES) {
      if (v.kind() == Kind.ALIAS || v.kind() == Kind.SAME) {
        assertThat(v.ours()).as(v.name()).isNotBlank();
      }
      if (v.kind() != Kind.SAME) {
        assertThat(v.note()).as(v.name()).isNotBlank();
      }
    }
  }

  @Test
  void migratingMd_shouldHaveARowPerVariable_sayingWhatTheCodeDoes() throws IOException {
    final String doc = Files.readString(Path.of("../docs/migrating.md"));
    for (final Variable v : JsRelayEnvironment.VARIABLES) {
      assertThat(doc).as(v.name()).contains("| `" + v.name() + "` | ");
      assertThat(doc).as(v.name()).contains(v.note().replace("|", "\\|"));
    }
  }

  /** What each accepted variable of the example sets, read back from the configuration. */
  private static final Map<String, Function<RelayConfig, Object>> EFFECT = new HashMap<>();

  static {
    EFFECT.put("METRICS_PORT", c -> c.http().port());
    EFFECT.put("METRICS_HTTPS_PORT", c -> c.https().port());
    EFFECT.put("RELAY_TCP_PORT", c -> c.network().tcpPort());
    EFFECT.put("RELAY_WS_PORT", c -> c.network().wsPort());
    EFFECT.put("RELAY_QUIC_PORT", c -> c.network().quicPort());
    EFFECT.put("RELAY_DISABLE_QUIC", c -> c.network().quicDisabled());
    EFFECT.put("VITE_APPEND_ANNOUNCE", c -> String.join(",", c.network().announce()));
    EFFECT.put("RELAY_LISTEN_IPV4", c -> c.network().listenIpv4());
    EFFECT.put("RELAY_LISTEN_IPV6", c -> c.network().listenIpv6());
    EFFECT.put("RELAY_DISABLE_IPV6", c -> c.network().ipv6Disabled());
    EFFECT.put("RELAY_DISABLE_BOOTSTRAP", c -> c.network().bootstrapDisabled());
    EFFECT.put("RELAY_CIRCUIT_HOP_TIMEOUT_MS", c -> c.circuit().relay().hopTimeout().toMillis());
    EFFECT.put("RELAY_CIRCUIT_MAX_RESERVATIONS", c -> c.circuit().relay().maxReservations());
    EFFECT.put("RELAY_CIRCUIT_RESERVATION_TTL_MS",
        c -> c.circuit().relay().reservationTtl().toMillis());
    EFFECT.put("RELAY_CIRCUIT_DEFAULT_DATA_LIMIT_BYTES",
        c -> c.circuit().relay().defaultDataLimit());
    EFFECT.put("RELAY_CIRCUIT_DEFAULT_DURATION_LIMIT_MS",
        c -> c.circuit().relay().defaultDurationLimit().toMillis());
    EFFECT.put("METRICS_DISABLED", c -> c.http().disabled());
    EFFECT.put("METRICS_HTTPS_ENABLED", c -> c.https().enabled());
    EFFECT.put("METRICS_CORS_ORIGIN", c -> String.join(",", c.cors().allowedOrigins()));
    EFFECT.put("METRICS_CORS_ALLOW_HEADERS", c -> String.join(",", c.cors().allowHeaders()));
    EFFECT.put("DATASTORE_PATH", c -> c.storage().dataDir().toString());
    EFFECT.put("PUBSUB_TOPICS", c -> String.join(",", c.circuit().discoveryTopics()));
    EFFECT.put("STAGING", c -> c.tls().staging());
  }

  /** The switches of the example that are accepted for asking a feature to be off. */
  private static final Set<String> OFF_AND_ACCEPTED = Set.of(
      "RELAY_REQUIRE_ORBITDB_HEADS_PROTOCOL", "RELAY_CONNECTIVITY_ECHO_ENABLED",
      "RELAY_CONNECTIVITY_BULK_ENABLED");
  /** Accepted without an effect (logged): they tune a protocol that is off. */
  private static final Set<String> NO_EFFECT = Set.of("RELAY_CONNECTIVITY_BULK_MAX_FRAME_BYTES",
      "RELAY_CONNECTIVITY_BULK_READ_TIMEOUT_MS", "RELAY_CONNECTIVITY_BULK_IDLE_TIMEOUT_MS");
  /** Empty in the example, so unset. */
  private static final Set<String> EMPTY = Set.of("TEST_PRIVATE_KEY", "RELAY_PRIV_KEY",
      "disableAutoTLS");

  @Test
  void exampleEnv_eachVariableShouldTakeEffectOrStopStartUpNamingIt() throws IOException {
    final List<String> refused = new ArrayList<>();
    final Set<String> checked = new LinkedHashSet<>();
    for (final Map.Entry<String, String> e : exampleAssignments()) {
      final String name = e.getKey();
      final String value = e.getValue();
      checked.add(name);
      final Map<String, String> env = Map.of(name, value);
      if (EMPTY.contains(name)) {
        assertThat(value).isEmpty();
        assertThat(RelayConfig.fromEnvironment(env)).isEqualTo(RelayConfig.DEFAULT);
        continue;
      }
      if (EFFECT.containsKey(name)) {
        final Object read = EFFECT.get(name).apply(RelayConfig.fromEnvironment(env));
        assertThat(String.valueOf(read)).as(name + "=" + value)
            .isEqualTo(value);
        continue;
      }
      if (OFF_AND_ACCEPTED.contains(name) || NO_EFFECT.contains(name)) {
        assertThat(RelayConfig.fromEnvironment(env)).as(name).isEqualTo(RelayConfig.DEFAULT);
        continue;
      }
      assertThatThrownBy(() -> RelayConfig.fromEnvironment(env)).as(name + "=" + value)
          .isInstanceOf(InvalidConfigException.class)
          .satisfies(t -> {
            assertThat(((InvalidConfigException) t).variable()).isEqualTo(name);
            assertThat(t.getMessage()).contains(name + "=" + value)
                .contains(JsRelayEnvironment.find(name).orElseThrow().note());
          });
      refused.add(name);
    }
    // The example's values ask for WebRTC-direct listeners: those alone are refused.
    assertThat(refused).containsExactlyInAnyOrder("RELAY_WEBRTC_PORT", "RELAY_WEBRTC_PORT",
        "RELAY_DISABLE_WEBRTC");
    assertThat(checked).hasSizeGreaterThan(30);
  }

  @Test
  void exampleEnv_whole_shouldStopStartUpListingEveryRefusedSetting_andStartWithoutThem()
      throws IOException {
    final Map<String, String> env = exampleEnvironment();
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(env))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("2 orbitdb-relay settings relay-pinner does not support")
        .hasMessageContaining("RELAY_WEBRTC_PORT=9093")
        .hasMessageContaining("RELAY_DISABLE_WEBRTC=false")
        .satisfies(t -> assertThat(t.getMessage()).doesNotContain("QUIC"));

    // Turned off as the messages say, the example's environment is a relay's configuration.
    env.put("RELAY_DISABLE_WEBRTC", "true");
    final RelayConfig config = RelayConfig.fromEnvironment(env);
    assertThat(config.http().port()).isEqualTo(9090);
    assertThat(config.network().tcpPort()).isEqualTo(9091);
    assertThat(config.network().quicPort()).isEqualTo(9094);
    assertThat(config.network().quicDisabled()).isFalse();
    assertThat(config.network().announce()).containsExactly(
        "/ip4/203.0.113.8/tcp/50001", "/ip4/203.0.113.8/tcp/6300/ws",
        "/ip4/203.0.113.8/udp/50005/quic-v1", "/ip4/203.0.113.8/udp/50003/webrtc-direct");
    assertThat(config.storage().dataDir()).isEqualTo(Path.of("./orbitdb/relay"));
    assertThat(config.cors().allowHeaders()).containsExactly("Content-Type", "Authorization");
  }

  @Test
  void mapped_shouldApplyAsTheJsRelayMeansThem() {
    // Aliases of ours.
    assertThat(RelayConfig.fromEnvironment(Map.of("RELAY_IPFS_CAT_TIMEOUT_MS", "120000"))
        .gateway().fallbackTimeout()).isEqualTo(Duration.ofMinutes(2));
    final RelayConfig deployed = RelayConfig.fromEnvironment(Map.of("EXTERNAL_TCP_PORT", "4001",
        "EXTERNAL_WS_PORT", "443", "EXTERNAL_WEBRTC_PORT", "4002", "EXTERNAL_QUIC_PORT", "4003"));
    assertThat(deployed.deployedMode()).isTrue();
    assertThat(deployed.deployment().externalTcpPort()).hasValue(4001);
    assertThat(deployed.deployment().externalWsPort()).hasValue(443);
    assertThat(RelayConfig.fromEnvironment(Map.of("EXTERNAL_QUIC_PORT", "4003")).deployedMode())
        .isTrue();
    // NODE_ENV=development reads VITE_APPEND_ANNOUNCE_DEV instead of VITE_APPEND_ANNOUNCE.
    final Map<String, String> announce = Map.of("VITE_APPEND_ANNOUNCE", "/ip4/203.0.113.8/tcp/1",
        "VITE_APPEND_ANNOUNCE_DEV", "/ip4/127.0.0.1/tcp/2");
    assertThat(RelayConfig.fromEnvironment(announce).network().announce())
        .containsExactly("/ip4/203.0.113.8/tcp/1");
    final Map<String, String> dev = new HashMap<>(announce);
    dev.put("NODE_ENV", "development");
    assertThat(RelayConfig.fromEnvironment(dev).network().announce())
        .containsExactly("/ip4/127.0.0.1/tcp/2");
    // The AutoNAT and DHT switches.
    assertThat(RelayConfig.fromEnvironment(Map.of("RELAY_DISABLE_AUTONAT", "true")).network()
        .autoNatDisabled()).isTrue();
    assertThat(RelayConfig.DEFAULT.network().autoNatDisabled()).isFalse();
    assertThat(RelayConfig.fromEnvironment(Map.of("RELAY_DISABLE_DHT", "1")).network()
        .dhtMode()).isEqualTo(DhtMode.OFF);
    assertThat(RelayConfig.fromEnvironment(Map.of("RELAY_DISABLE_DHT", "false")))
        .isEqualTo(RelayConfig.DEFAULT);
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(Map.of("RELAY_DISABLE_DHT", "true",
        "RELAY_DHT_MODE", "server"))).isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("RELAY_DISABLE_DHT=true").hasMessageContaining("RELAY_DHT_MODE");
    // Ports of missing transports are fine while the transport is off.
    assertThat(RelayConfig.fromEnvironment(Map.of("RELAY_WEBRTC_PORT", "9093",
        "RELAY_DISABLE_WEBRTC", "true"))).isEqualTo(RelayConfig.DEFAULT);
    // QUIC: the same names and meaning.
    final RelayConfig quic = RelayConfig.fromEnvironment(Map.of("RELAY_QUIC_PORT", "50005",
        "RELAY_DISABLE_QUIC", "1"));
    assertThat(quic.network().quicPort()).isEqualTo(50005);
    assertThat(quic.network().quicDisabled()).isTrue();
    assertThat(RelayConfig.DEFAULT.network().quicPort()).isEqualTo(9094);
    assertThat(RelayConfig.DEFAULT.network().quicDisabled()).isFalse();
    // One sync timeout.
    assertThat(RelayConfig.fromEnvironment(Map.of("RELAY_ORBITDB_SYNC_TIMEOUT_MS", "120000"))
        .sync().pinningSyncTimeout()).isEqualTo(Duration.ofMinutes(2));
    assertThat(RelayConfig.fromEnvironment(Map.of("RELAY_ORBITDB_SYNC_TIMEOUT_MS", "5000",
        "RELAY_PINNING_SYNC_TIMEOUT_MS", "5000")).sync().pinningSyncTimeout())
        .isEqualTo(Duration.ofSeconds(5));
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(Map.of(
        "RELAY_ORBITDB_SYNC_TIMEOUT_MS", "120000", "RELAY_PINNING_SYNC_TIMEOUT_MS", "5000")))
        .hasMessageContaining("RELAY_ORBITDB_SYNC_TIMEOUT_MS=120000")
        .hasMessageContaining("RELAY_PINNING_SYNC_TIMEOUT_MS");
    // Logging switches: logger categories over LOG_LEVEL.
    final RelayConfig logs = RelayConfig.fromEnvironment(Map.of("ENABLE_SYNC_LOGS", "true",
        "LOG_LEVEL_BLOCK_FETCH", "1", "ENABLE_HEADS_STREAM_LOGS", "false",
        "DEBUG", "libp2p:*,other:*"));
    assertThat(logs.logging().loggerLevels()).containsEntry("io.relaypinner.relay.sync",
        LogLevel.DEBUG).containsEntry("io.relaypinner.ipfs.bitswap", LogLevel.DEBUG)
        .containsEntry("io.relaypinner.libp2p", LogLevel.DEBUG)
        .doesNotContainKey("io.relaypinner.orbitdb.heads");
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(Map.of("ENABLE_SYNC_LOGS", "maybe")))
        .hasMessageContaining("ENABLE_SYNC_LOGS");
    // Refused whenever set, with our equivalent named; secrets not echoed.
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(Map.of("TEST_PRIVATE_KEY", "0801")))
        .hasMessageContaining("RELAY_PRIV_KEY").hasMessageNotContaining("0801");
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(Map.of(
        "RELAY_ORBITDB_SYNC_MAX_COOLDOWN_MS", "900000")))
        .hasMessageContaining("RELAY_ORBITDB_SYNC_COOLDOWN_MS");
  }
}
