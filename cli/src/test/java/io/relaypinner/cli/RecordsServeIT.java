package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.client.HttpRecordStore;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code relay-pinner records serve} as a process (the shaded jar this build made): it logs the
 * bound port, serves the records API, stops cleanly on SIGTERM and keeps its data across a
 * restart; a second service on the same data directory exits 1.
 */
class RecordsServeIT {
  private static final Path JAR = Path.of("target", "relay-pinner.jar").toAbsolutePath();
  private static final Pattern LISTENING =
      Pattern.compile("record service listening on http://127\\.0\\.0\\.1:(\\d+)");

  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void stop() throws InterruptedException {
    for (final Process process : processes) {
      if (process.isAlive()) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  private Process start(final Path log, final Path data) throws IOException {
    final ProcessBuilder builder = new ProcessBuilder(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar",
        JAR.toString(), "records", "serve", "--port", "0", "--data-dir", data.toString());
    builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
    builder.redirectError(log.toFile());
    final Process process = builder.start();
    processes.add(process);
    return process;
  }

  private static int awaitPort(final Process process, final Path log) {
    final int[] port = new int[1];
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
      assertThat(process.isAlive()).as("records serve alive").isTrue();
      final Matcher matcher = LISTENING.matcher(Files.readString(log));
      if (matcher.find()) {
        port[0] = Integer.parseInt(matcher.group(1));
        return true;
      }
      return false;
    });
    return port[0];
  }

  @Test
  void serve_shouldLogThePort_serveRecords_andKeepThemAcrossARestart(@TempDir final Path dir)
      throws Exception {
    final Path data = dir.resolve("records");
    final Path log = dir.resolve("first.log");
    final Process first = start(log, data);
    final HttpRecordStore client = new HttpRecordStore(
        URI.create("http://127.0.0.1:" + awaitPort(first, log)));
    final RecordSigner owner = new RecordSigner(
        EthPrivateKey.generate(new SecureRandom()), Clock.systemUTC());
    final ObjectNode entries = JsonNodeFactory.instance.objectNode();
    entries.putObject("token").put("status", "pending");
    assertThat(client.publish(owner.aggregate("vm-bootstrap-config", entries, null)).processed())
        .isTrue();

    final Path secondLog = dir.resolve("second.log");
    final Process second = start(secondLog, data);
    assertThat(second.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(second.exitValue()).isEqualTo(1);
    assertThat(Files.readString(secondLog)).contains("locked");

    first.destroy();
    assertThat(first.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(Files.readString(log)).contains("record service stopped");

    final Path thirdLog = dir.resolve("third.log");
    final Process third = start(thirdLog, data);
    final HttpRecordStore again = new HttpRecordStore(
        URI.create("http://127.0.0.1:" + awaitPort(third, thirdLog)));
    assertThat(again.aggregateEntry(owner.address(), "vm-bootstrap-config", "token")
        .orElseThrow().path("status").asText()).isEqualTo("pending");
  }
}
