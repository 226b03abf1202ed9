package io.relaypinner.relay.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunStateTest {
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-11-29T06:00:00Z"), ZoneOffset.UTC);

  @TempDir
  Path dir;

  @Test
  void begin_shouldCountNothing_whenTheDirectoryIsNew() throws IOException {
    final RunState run = RunState.begin(dir, CLOCK);
    assertThat(run.uncleanExits()).isZero();
    assertThat(run.previousRunUnclean()).isFalse();
    assertThat(Files.readString(dir.resolve(RunState.FILE))).contains("state=running");
  }

  @Test
  void begin_shouldNotCount_afterACleanStop() {
    RunState.begin(dir, CLOCK).end();
    final RunState second = RunState.begin(dir, CLOCK);
    assertThat(second.uncleanExits()).isZero();
    assertThat(second.previousRunUnclean()).isFalse();
  }

  @Test
  void begin_shouldCountAcrossRestarts_whenRunsEndedWithoutAStop() {
    RunState.begin(dir, CLOCK);                      // killed: never ended
    final RunState second = RunState.begin(dir, CLOCK);
    assertThat(second.uncleanExits()).isEqualTo(1);
    assertThat(second.previousRunUnclean()).isTrue();
    second.end();
    final RunState third = RunState.begin(dir, CLOCK);
    assertThat(third.uncleanExits()).isEqualTo(1);
    assertThat(third.previousRunUnclean()).isFalse();
    final RunState fourth = RunState.begin(dir, CLOCK);   // third was killed too
    assertThat(fourth.uncleanExits()).isEqualTo(2);
  }

  @Test
  void begin_shouldStartCountingAgain_whenTheFileIsGarbage() throws IOException {
    Files.writeString(dir.resolve(RunState.FILE), "state=running\nunclean_exits=many\n");
    final RunState run = RunState.begin(dir, CLOCK);
    assertThat(run.uncleanExits()).isZero();
    assertThat(Files.readString(dir.resolve(RunState.FILE))).contains("unclean_exits=0");
  }

  @Test
  void register_shouldExposeTheCountAndTheLastRun() throws IOException {
    RunState.begin(dir, CLOCK);
    final PrometheusRegistry registry = new PrometheusRegistry();
    RunState.begin(dir, CLOCK).register(registry);
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, registry.scrape());
    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains("relay_unclean_exits_total 1.0", "relay_previous_run_unclean 1.0");
  }
}
