package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.handoff.deploy.DeployWallet;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code deploy} command line parsing and help (no guest is started). */
class DeployCommandTest {
  @TempDir
  Path dir;

  @Test
  void help_shouldExplainEveryOption_whenAsked() {
    final StringWriter out = new StringWriter();
    Main.execute(new String[] {"deploy", "--help"}, Map.of(), new PrintWriter(out, true),
        new PrintWriter(new StringWriter(), true));
    final List<String> options = new ArrayList<>(List.of("--handoff", "--provider", "--origin",
        "--manifest", "--profile", "--records", "--deployments-dir", "--wallet-key-file",
        "--ssh-key", "--name", "--max-candidates", "--ack-timeout", "--setup-attempts",
        "--setup-backoff", "--relay-timeout", "--registration-timeout",
        "--authorization-validity", "--derive-publisher-key", "--bind", "--public-ip", "list",
        "erase", DeployWallet.ENV));
    assertThat(out.toString()).contains(options);
  }

  private int run(final StringWriter out, final StringWriter err, final String... args) {
    return Main.execute(args, Map.of(), new PrintWriter(out, true), new PrintWriter(err, true));
  }

  @Test
  void deploy_shouldExitTwoNamingTheOption_whenMaxCandidatesOutOfRange() {
    final StringWriter err = new StringWriter();
    assertThat(run(new StringWriter(), err, "deploy", "--deployments-dir", dir.toString(),
        "--max-candidates", "6")).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("max candidates must be 1-5");
  }

  @Test
  void deploy_shouldExitTwo_whenPullForcedOnPushOnlyImage() throws Exception {
    final Path manifest = dir.resolve("m.json");
    Files.writeString(manifest, "{\"profile\":\"orbitdb-relay\",\"version\":\"v1\","
        + "\"requiredPortForwards\":[{\"port\":9091},{\"port\":9092},{\"port\":9090}]}");
    final StringWriter err = new StringWriter();
    assertThat(run(new StringWriter(), err, "deploy", "--deployments-dir", dir.toString(),
        "--manifest", manifest.toString(), "--handoff", "pull")).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("does not declare supportsBootstrapConfigAggregate");
  }

  @Test
  void deploy_shouldExitTwoWithJson_whenHttpsOriginAndPushOnlyImage() throws Exception {
    final Path manifest = dir.resolve("m.json");
    Files.writeString(manifest, "{\"profile\":\"orbitdb-relay\",\"version\":\"v1\","
        + "\"requiredPortForwards\":[{\"port\":9091},{\"port\":9092},{\"port\":9090}]}");
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();
    assertThat(run(out, err, "deploy", "--deployments-dir", dir.toString(), "--manifest",
        manifest.toString(), "--origin", "https://app.example")).isEqualTo(Main.EXIT_USAGE);
    assertThat(out.toString()).contains("\"code\":\"mixed_content\"", "\"attempts\":[]");
    assertThat(err.toString()).contains("No host was created");
  }

  @Test
  void list_shouldSayNone_whenNoDeployments() {
    final StringWriter out = new StringWriter();
    assertThat(run(out, new StringWriter(), "deploy", "list", "--deployments-dir",
        dir.toString())).isZero();
    assertThat(out.toString()).contains("no local deployments");
  }

  @Test
  void erase_shouldFail_whenUnknownId() {
    final StringWriter err = new StringWriter();
    assertThat(run(new StringWriter(), err, "deploy", "erase", "--deployments-dir",
        dir.toString(), "nope")).isEqualTo(Main.EXIT_FAILURE);
    assertThat(err.toString()).contains("no local deployment nope");
  }
}
