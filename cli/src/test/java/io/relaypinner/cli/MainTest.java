package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.relay.RelayVersion;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(final Map<String, String> env, final String... args) {
    return Main.execute(args, env, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  @Test
  void help_shouldListCommandsAndExitCodes() {
    assertThat(run(Map.of(), "--help")).isZero();
    assertThat(out.toString()).contains("Usage: relay-pinner", "run", "Exit codes");
  }

  @Test
  void runHelp_shouldDescribeEnvFileAndSettings() {
    assertThat(run(Map.of(), "run", "--help")).isZero();
    assertThat(out.toString()).contains("--env-file", "DATASTORE_PATH", "identity.key");
  }

  @Test
  void guestSetupServerHelp_shouldDescribeRoutesFieldsAndStateDirectory() {
    assertThat(run(Map.of(), "guest", "setup-server", "--help")).isZero();
    assertThat(out.toString()).contains("--state-dir", "--port", "default 80", "/configure",
        "public_ipv4", "bootstrap_owner_authorization_b64", "owner", "relay.env");
  }

  @Test
  void guestPullHelp_shouldDescribeTheLocatorRecordsAndAcknowledgement() {
    assertThat(run(Map.of(), "guest", "pull", "--help")).isZero();
    assertThat(out.toString()).contains("--state-dir", "--records", "--authorized-keys",
        "aleph-bootstrap-config:<owner>:<token>", "vm-bootstrap-config-status");
  }

  @Test
  void guestPull_shouldExit2_whenRecordsIsMissing(@TempDir final Path dir) {
    assertThat(run(Map.of(), "guest", "pull", "--state-dir", dir.toString()))
        .isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("--records");
  }

  @Test
  void guestSetupServer_shouldExit2_whenTheStateDirectoryIsMissing() {
    assertThat(run(Map.of(), "guest", "setup-server")).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("--state-dir");
  }

  @Test
  void version_shouldPrintTheBuildVersion() {
    assertThat(run(Map.of(), "--version")).isZero();
    assertThat(out.toString()).startsWith("relay-pinner 0.").doesNotContain("${")
        // The version /health and /multiaddrs answer (RelayNodeIT).
        .startsWith("relay-pinner " + RelayVersion.VERSION + System.lineSeparator());
  }

  @Test
  void unknownOption_shouldExit2_namingIt() {
    assertThat(run(Map.of(), "run", "--no-such-option")).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("--no-such-option");
  }

  @Test
  void badEnvironmentValue_shouldExit2_namingTheVariable() {
    assertThat(run(Map.of("METRICS_PORT", "abc"))).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("METRICS_PORT").contains("abc");
  }

  @Test
  void contradictoryDhtSettings_shouldExit2_namingBoth() {
    assertThat(run(Map.of("RELAY_DISABLE_DHT", "true", "RELAY_DHT_MODE", "server")))
        .isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("RELAY_DISABLE_DHT=true")
        .contains("contradicts RELAY_DHT_MODE=server");
    assertThat(run(Map.of("RELAY_DHT_MODE", "dht"))).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("RELAY_DHT_MODE").contains("off, client, server or auto");
  }

  @Test
  void badEnvFileValue_shouldExit2_andTheProcessEnvironmentShouldWin(@TempDir final Path dir)
      throws Exception {
    final Path file = dir.resolve("relay.env");
    Files.writeString(file, "METRICS_DISABLED=maybe\n");
    assertThat(run(Map.of(), "--env-file", file.toString())).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("METRICS_DISABLED");

    // The process environment wins over the file, so the bad file value is never read.
    Files.writeString(file, "METRICS_PORT=70000\nRELAY_SYNC_SLOTS=zero\n");
    err.getBuffer().setLength(0);
    assertThat(run(Map.of("RELAY_SYNC_SLOTS", "-1"), "run", "--env-file", file.toString()))
        .isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("METRICS_PORT");
  }

  @Test
  void badStoreSettings_shouldExit2_namingTheVariable() {
    assertThat(run(Map.of("RELAY_BLOCKSTORE", "ceph"))).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("RELAY_BLOCKSTORE").contains("ceph");
    err.getBuffer().setLength(0);
    assertThat(run(Map.of("RELAY_BLOCKSTORE", "s3"))).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("RELAY_S3_BUCKET");
    err.getBuffer().setLength(0);
    assertThat(run(Map.of("RELAY_BLOCKSTORE", "s3", "RELAY_S3_BUCKET", "Bad_Bucket")))
        .isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("RELAY_S3_BUCKET");
    err.getBuffer().setLength(0);
    assertThat(run(Map.of("RELAY_DATASTORE", "postgres", "RELAY_POSTGRES_URL",
        "postgres://db/relay"))).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("RELAY_POSTGRES_URL");
  }

  @Test
  void unreachableStore_shouldExit1(@TempDir final Path dir) {
    assertThat(run(Map.of("DATASTORE_PATH", dir.toString(), "RELAY_DATASTORE", "postgres",
        "RELAY_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:9/relay",
        "METRICS_PORT", "0", "RELAY_TCP_PORT", "0", "RELAY_WS_PORT", "0",
        "RELAY_QUIC_PORT", "0")))
        .isEqualTo(Main.EXIT_FAILURE);
  }

  @Test
  void missingEnvFile_shouldExit2_namingTheOption(@TempDir final Path dir) {
    assertThat(run(Map.of(), "run", "--env-file", dir.resolve("none.env").toString()))
        .isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("--env-file").contains("does not exist");
  }

  @Test
  void badRelayPrivKey_shouldExit2_withoutEchoingIt(@TempDir final Path dir) {
    assertThat(run(Map.of("RELAY_PRIV_KEY", "08011220abcd", "DATASTORE_PATH", dir.toString(),
        "METRICS_DISABLED", "true"))).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("RELAY_PRIV_KEY").doesNotContain("08011220abcd");
  }

  @Test
  void withDefaultCommand_shouldPrependRun_whenNoCommandIsGiven() {
    assertThat(Main.withDefaultCommand(new String[0])).containsExactly("run");
    assertThat(Main.withDefaultCommand(new String[] {"--env-file", "x"}))
        .containsExactly("run", "--env-file", "x");
    assertThat(Main.withDefaultCommand(new String[] {"--version"})).containsExactly("--version");
    assertThat(Main.withDefaultCommand(new String[] {"run"})).containsExactly("run");
  }
}
