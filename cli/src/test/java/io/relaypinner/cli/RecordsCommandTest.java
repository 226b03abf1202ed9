package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RecordsCommandTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(final Map<String, String> env, final String... args) {
    return Main.execute(args, env, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  @Test
  void help_shouldListTheRecordsCommand() {
    assertThat(run(Map.of(), "--help")).isZero();
    assertThat(out.toString()).contains("records");
  }

  @Test
  void serveHelp_shouldAnswerTheQuestionsAUserHas() {
    assertThat(run(Map.of(), "records", "serve", "--help")).isZero();
    // Help text wraps at the terminal width: compare with the line breaks folded.
    assertThat(out.toString().replaceAll("\\s+", " ")).contains("--port", "--data-dir",
        "--host", "--max-body-bytes",
        "--idle-timeout-ms", "/api/v0/messages", "/api/v0/aggregates/", "/api/v0/posts.json",
        "EIP-191", "null is deleted", "403", "records.mv.db", "Exit codes");
  }

  @Test
  void records_shouldExit2_whenNoSubcommandIsGiven() {
    assertThat(run(Map.of(), "records")).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("serve");
  }

  @Test
  void serve_shouldExit2NamingTheOption_whenThePortIsOutOfRange() {
    assertThat(run(Map.of(), "records", "serve", "--port", "70000")).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("--port").contains("70000");
  }

  @Test
  void serve_shouldExit2NamingTheOption_whenTheBodyLimitIsTooSmall() {
    assertThat(run(Map.of(), "records", "serve", "--max-body-bytes", "10"))
        .isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("--max-body-bytes");
  }

  @Test
  void serve_shouldExit2NamingTheVariable_whenLogLevelIsBad() {
    assertThat(run(Map.of("LOG_LEVEL", "loud"), "records", "serve")).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("LOG_LEVEL").contains("loud");
  }
}
