package io.relaypinner.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EnvFileTest {
  @Test
  void parse_shouldReadPairs_skippingCommentsAndBlankLines() throws Exception {
    final Map<String, String> values = EnvFile.parse(List.of(
        "# relay settings",
        "",
        "METRICS_PORT=9191",
        "export PUBLIC_IPV4 = 203.0.113.7 ",
        "PROXY_HOSTNAME=\"relay.example.org\"",
        "RELAY_ANNOUNCE='/dns4/a.example/tcp/443/wss'",
        "RELAY_API_TOKEN=abc#def",
        "EMPTY=",
        "METRICS_PORT=9292"), "test.env");
    assertThat(values).containsExactly(
        Map.entry("METRICS_PORT", "9292"),
        Map.entry("PUBLIC_IPV4", "203.0.113.7"),
        Map.entry("PROXY_HOSTNAME", "relay.example.org"),
        Map.entry("RELAY_ANNOUNCE", "/dns4/a.example/tcp/443/wss"),
        Map.entry("RELAY_API_TOKEN", "abc#def"),
        Map.entry("EMPTY", ""));
  }

  @Test
  void parse_shouldNameTheLine_whenItIsNotAPair() {
    assertThatThrownBy(() -> EnvFile.parse(List.of("A=1", "just text"), "relay.env"))
        .isInstanceOf(EnvFile.EnvFileException.class)
        .hasMessage("relay.env line 2: expected KEY=VALUE");
    assertThatThrownBy(() -> EnvFile.parse(List.of("1BAD=x"), "relay.env"))
        .isInstanceOf(EnvFile.EnvFileException.class)
        .hasMessageContaining("line 1").hasMessageContaining("1BAD");
    assertThatThrownBy(() -> EnvFile.parse(List.of("# ok", "", "=x"), "relay.env"))
        .isInstanceOf(EnvFile.EnvFileException.class)
        .hasMessage("relay.env line 3: expected KEY=VALUE");
  }

  @Test
  void overlay_shouldLetTheEnvironmentWin() {
    assertThat(EnvFile.overlay(Map.of("A", "file", "B", "file"), Map.of("A", "env")))
        .containsEntry("A", "env").containsEntry("B", "file");
  }

  @Test
  void read_shouldRefuseMissingOversizedAndMalformedFiles(@TempDir final Path dir)
      throws Exception {
    assertThatThrownBy(() -> EnvFile.read(dir.resolve("none.env")))
        .isInstanceOf(EnvFile.EnvFileException.class).hasMessageContaining("does not exist");
    final Path big = dir.resolve("big.env");
    Files.write(big, new byte[(int) EnvFile.MAX_SIZE + 1]);
    assertThatThrownBy(() -> EnvFile.read(big))
        .isInstanceOf(EnvFile.EnvFileException.class).hasMessageContaining("larger than");
    final Path bad = dir.resolve("bad.env");
    Files.writeString(bad, "A=1\r\nnot a pair\n");
    assertThatThrownBy(() -> EnvFile.read(bad))
        .isInstanceOf(EnvFile.EnvFileException.class)
        .hasMessage(bad + " line 2: expected KEY=VALUE");
    final Path ok = dir.resolve("ok.env");
    Files.writeString(ok, "A=1\n");
    assertThat(EnvFile.read(ok)).containsExactly(Map.entry("A", "1"));
  }

  @Test
  void format_shouldWritePlainValuesAsTheyAre() {
    final Map<String, String> values = new LinkedHashMap<>();
    values.put("DATASTORE_PATH", "/var/lib/guest/data");
    values.put("PUBLIC_IPV4", "203.0.113.7");
    values.put("EMPTY", "");
    assertThat(EnvFile.format(values, "written by the guest\nread by: relay-pinner run"))
        .isEqualTo("# written by the guest\n# read by: relay-pinner run\n"
            + "DATASTORE_PATH=/var/lib/guest/data\nPUBLIC_IPV4=203.0.113.7\nEMPTY=\n");
  }

  @Test
  void format_shouldWriteWhatParseReadsBack_spacesQuotesHashesAndEqualsIncluded(
      @TempDir final Path dir) throws Exception {
    final Map<String, String> values = new LinkedHashMap<>();
    values.put("SPACES", "  two words  ");
    values.put("INNER", "two words");
    values.put("TAB", "\tx");
    values.put("ONE_SPACE", " ");
    values.put("DOUBLE_QUOTED", "\"quoted\"");
    values.put("SINGLE_QUOTED", "'quoted'");
    values.put("QUOTE", "\"");
    values.put("QUOTES", "\"\"");
    values.put("MIXED", "'a\"");
    values.put("HASH", "# not a comment");
    values.put("INNER_HASH", "abc#def");
    values.put("EQUALS", "a=b==c");
    values.put("LEADING_EQUALS", "=x");
    values.put("EXPORT", "export A=1");
    values.put("UNICODE", "\u2028é\u00a0");
    values.put("EMPTY", "");
    final String text = EnvFile.format(values, "comment\r\nwith # and = and \"quotes\"\rend");
    assertThat(EnvFile.parse(List.of(text.split("\n", -1)), "written"))
        .containsExactlyEntriesOf(values);
    assertThat(text).contains("SPACES=\"  two words  \"\n", "INNER=two words\n",
        "DOUBLE_QUOTED=\"\"quoted\"\"\n", "HASH=# not a comment\n", "EQUALS=a=b==c\n");

    final Path file = dir.resolve("relay.env");
    Files.writeString(file, text, StandardCharsets.UTF_8);
    assertThat(EnvFile.read(file)).containsExactlyEntriesOf(values);
  }

  @Test
  void format_shouldRefuseWhatTheFormatCannotHold_namingTheKeyOnly() {
    assertThatThrownBy(() -> EnvFile.format(Map.of("TOKEN", "secret\nNEXT=1"), ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("TOKEN").hasMessageNotContaining("secret");
    assertThatThrownBy(() -> EnvFile.format(Map.of("TOKEN", "secret\r"), ""))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("line break");
    assertThatThrownBy(() -> EnvFile.format(Map.of("TOKEN", "a\ud800b"), ""))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("TOKEN");
    assertThatThrownBy(() -> EnvFile.format(Map.of("1BAD", "x"), ""))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1BAD");
    assertThatThrownBy(() -> EnvFile.format(Map.of("A B", "x"), ""))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
