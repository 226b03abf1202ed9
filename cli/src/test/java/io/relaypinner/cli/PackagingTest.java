package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The files in packaging/: the systemd unit passes systemd-analyze; both keep their promises. */
class PackagingTest {
  private static final Path PACKAGING = Path.of("..", "packaging");

  @Test
  void unit_shouldPassSystemdAnalyzeVerify(@TempDir final Path dir) throws Exception {
    final Path unit = dir.resolve("relay-pinner.service");
    Files.copy(PACKAGING.resolve("relay-pinner.service"), unit);
    final Path tool = Path.of("/usr/bin/systemd-analyze");
    assumeTrue(Files.isExecutable(tool), "systemd-analyze is not installed: unit not verified");
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/java")),
        "no /usr/bin/java (the unit's ExecStart): unit not verified");
    final Process process = new ProcessBuilder(tool.toString(), "verify", unit.toString())
        .redirectErrorStream(true).start();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    final String output = new String(process.getInputStream().readAllBytes(),
        StandardCharsets.UTF_8);
    // Messages about other units of the machine are not ours; any about this one fails.
    assertThat(output.lines().filter(l -> l.contains("relay-pinner")).toList())
        .as(output).isEmpty();
    assertThat(process.exitValue()).as(output).isZero();
  }

  @Test
  void unit_shouldBeHardened() throws IOException {
    final List<String> lines = Files.readAllLines(PACKAGING.resolve("relay-pinner.service"));
    assertThat(lines).contains("DynamicUser=yes", "NoNewPrivileges=yes", "ProtectSystem=strict",
        "StateDirectory=relay-pinner", "ProtectHome=yes", "PrivateTmp=yes",
        "CapabilityBoundingSet=", "Environment=DATASTORE_PATH=/var/lib/relay-pinner",
        "RestartPreventExitStatus=2");
  }

  @Test
  void containerfile_shouldBeMultiStage_nonRoot_withAHealthCheck() throws IOException {
    final String file = Files.readString(PACKAGING.resolve("Containerfile"));
    assertThat(file.lines().filter(l -> l.startsWith("FROM ")).count()).isEqualTo(2);
    assertThat(file).contains("USER relay-pinner", "HEALTHCHECK ",
        "http://127.0.0.1:9090/health", "UNTESTED");
  }
}
