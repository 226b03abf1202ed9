package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The files in packaging/: the systemd unit passes systemd-analyze; both keep their promises; the
 * launcher, the unit and the Containerfile run the JVM with the one argument file
 * {@code packaging/jvm.options} and name no JVM option of their own.
 */
class PackagingTest {
  private static final Path PACKAGING = Path.of("..", "packaging");
  private static final Path JVM_OPTIONS = PACKAGING.resolve("jvm.options");
  /** Where the unit and the image install the argument file. */
  private static final String INSTALLED_OPTIONS = "/opt/relay-pinner/jvm.options";
  /** A JVM option on a command line: -X…, -XX:…, -D…, or -Xmx-style sizes. */
  private static final Pattern JVM_OPTION = Pattern.compile("(^|[\\s\"])-(X|D)[A-Za-z:+-]");

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

  /** The options of the argument file: its tokens, comments and blank lines left out. */
  static List<String> jvmOptions(final Path file) throws IOException {
    return Files.readAllLines(file).stream()
        .map(line -> line.contains("#") ? line.substring(0, line.indexOf('#')) : line)
        .flatMap(line -> Arrays.stream(line.trim().split("\\s+")))
        .filter(token -> !token.isEmpty())
        .toList();
  }

  @Test
  void jvmOptions_shouldBoundTheHeap_andEndTheProcessOnOutOfMemory() throws IOException {
    assertThat(jvmOptions(JVM_OPTIONS)).contains("-XX:+ExitOnOutOfMemoryError", "-Xmx160m",
        "-XX:+UseSerialGC", "-Xms48m", "-Xmn16m", "-XX:MaxMetaspaceSize=96m")
        .allMatch(option -> option.startsWith("-X") || option.startsWith("-D"))
        .doesNotHaveDuplicates();
  }

  @Test
  void jvmOptions_shouldBeAcceptedByThisJvm() throws Exception {
    final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    final Process process = new ProcessBuilder(java.toString(), "@" + JVM_OPTIONS.toAbsolutePath(),
        "-XX:+PrintFlagsFinal", "-version").redirectErrorStream(true).start();
    final String output = new String(process.getInputStream().readAllBytes(),
        StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    // An older JDK 17 lacks -XX:TrimNativeHeapInterval: the launcher leaves that line out there.
    assumeTrue(!output.contains("TrimNativeHeapInterval") || process.exitValue() == 0,
        "this JDK does not know -XX:TrimNativeHeapInterval");
    assertThat(process.exitValue()).as(output).isZero();
    assertThat(output).containsPattern("bool ExitOnOutOfMemoryError\\s+= true")
        .containsPattern("MaxHeapSize\\s+= 167772160");
  }

  @Test
  void launcher_unit_andContainerfile_shouldTakeTheirJvmOptionsFromTheOneFile()
      throws IOException {
    final String launcher = Files.readString(Path.of("..", "relay-pinner"));
    assertThat(launcher).contains("$root/packaging/jvm.options", "mem_opts=(\"@$jvm_options\")");
    // The launcher's own command lines carry no memory option besides the argument file.
    assertThat(launcher.lines().filter(l -> !l.trim().startsWith("#"))
        .filter(l -> l.matches(".*-X(mx|ms|mn|ss)\\d.*|.*-XX:\\+Use.*GC.*")).toList()).isEmpty();

    final List<String> unit = Files.readAllLines(PACKAGING.resolve("relay-pinner.service"));
    final List<String> execStart = unit.stream().filter(l -> l.startsWith("ExecStart=")).toList();
    assertThat(execStart).containsExactly("ExecStart=/usr/bin/java @" + INSTALLED_OPTIONS
        + " -jar /opt/relay-pinner/relay-pinner.jar run");
    assertThat(unit).contains("#   install -D -m 0644 packaging/jvm.options " + INSTALLED_OPTIONS,
        "Environment=MALLOC_ARENA_MAX=2", "Restart=on-failure");

    final String containerfile = Files.readString(PACKAGING.resolve("Containerfile"));
    assertThat(containerfile).contains("COPY packaging/jvm.options " + INSTALLED_OPTIONS,
        "ENTRYPOINT [\"java\", \"@" + INSTALLED_OPTIONS + "\", \"-jar\", "
            + "\"/opt/relay-pinner/relay-pinner.jar\"]", "MALLOC_ARENA_MAX=2");
    // Nor does anything else set JVM options behind the argument file's back (JAVA_TOOL_OPTIONS).
    for (final String line : containerfile.lines()
        .filter(l -> l.matches("(ENTRYPOINT|CMD|ENV) .*|\\s+[A-Z_]+=.*")).toList()) {
      assertThat(JVM_OPTION.matcher(line).find()).as(line).isFalse();
    }
    assertThat(unit.stream().filter(l -> l.startsWith("Environment="))
        .filter(l -> JVM_OPTION.matcher(l).find()).toList()).isEmpty();
  }
}
