package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.relay.RelayVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./relay-pinner run} with orbitdb-relay 0.10.8's example {@code .env}, every value
 * uncommented (the relay module's copy, MIT): start-up stops with exit 2 and one message naming
 * each refused setting; with those turned off as the message says, the relay starts and the
 * settings took effect ({@code VITE_APPEND_ANNOUNCE} in {@code /multiaddrs}), and {@code /health}
 * and {@code /multiaddrs} carry the build's version. The listeners stay the harness's (loopback,
 * free ports): the example's ports are checked in-process by {@code JsRelayEnvironmentTest}.
 */
class JsRelayEnvironmentIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path EXAMPLE = Path.of("../relay/src/test/resources/orbitdb-relay-0.10.8"
      + "/env.example");
  private static final Pattern ASSIGNMENT =
      Pattern.compile("^#\\s*(?:Optional:\\s*)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$");
  /** The harness's own (loopback, free ports, its data directory). */
  private static final Set<String> HARNESS = Set.of("METRICS_PORT", "RELAY_TCP_PORT",
      "RELAY_WS_PORT", "RELAY_LISTEN_IPV4", "RELAY_LISTEN_IPV6", "RELAY_DISABLE_IPV6",
      "DATASTORE_PATH", "METRICS_HTTPS_PORT");

  private static Map<String, String> example() throws Exception {
    final Map<String, String> env = new LinkedHashMap<>();
    for (final String line : Files.readAllLines(EXAMPLE)) {
      final Matcher m = ASSIGNMENT.matcher(line.strip());
      if (m.matches() && !HARNESS.contains(m.group(1))) {
        env.put(m.group(1), m.group(2).replace("PUBLIC_IP", "203.0.113.8"));
      }
    }
    return env;
  }

  @Test
  void jsRelayExampleEnv_shouldStopWithExit2NamingTheRefused_andStartOnceTheyAreOff(
      @TempDir final Path dir) throws Exception {
    final Map<String, String> env = example();
    assertThat(env).containsKeys("VITE_APPEND_ANNOUNCE", "RELAY_QUIC_PORT", "PUBSUB_TOPICS");
    final RelayProcess.Builder refused = RelayProcess.builder(dir.resolve("refused"));
    env.forEach(refused::env);
    try (RelayProcess relay = refused.launch()) {
      assertThat(relay.awaitExit(Duration.ofSeconds(60))).hasValue(2);
      assertThat(relay.stderr()).contains("2 orbitdb-relay settings relay-pinner does not support")
          .contains("RELAY_WEBRTC_PORT=9093", "RELAY_DISABLE_WEBRTC=false", "docs/migrating.md")
          .doesNotContain("RELAY_QUIC_PORT");
    }

    final RelayProcess.Builder fixed = RelayProcess.builder(dir.resolve("fixed"));
    env.forEach(fixed::env);
    // QUIC is read as orbitdb-relay reads it; an ephemeral port here, 9094 may be taken.
    fixed.env("RELAY_QUIC_PORT", "0").env("RELAY_DISABLE_WEBRTC", "true");
    try (RelayProcess relay = fixed.start()) {
      final JsonNode health = JSON.readTree(relay.get("/health").body());
      assertThat(health.get("version").asText()).isEqualTo(RelayVersion.VERSION);
      final JsonNode multiaddrs = JSON.readTree(relay.get("/multiaddrs").body());
      assertThat(multiaddrs.get("version").asText()).isEqualTo(RelayVersion.VERSION);
      final List<String> all = JSON.convertValue(multiaddrs.get("all"),
          JSON.getTypeFactory().constructCollectionType(List.class, String.class));
      assertThat(all).anySatisfy(a -> assertThat(a).startsWith("/ip4/203.0.113.8/tcp/50001"))
          .anySatisfy(a -> assertThat(a).startsWith("/ip4/203.0.113.8/tcp/6300/ws"));
    }
  }
}
