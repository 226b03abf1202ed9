package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
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
  }

  @Test
  void overlay_shouldLetTheEnvironmentWin() {
    assertThat(EnvFile.overlay(Map.of("A", "file", "B", "file"), Map.of("A", "env")))
        .containsEntry("A", "env").containsEntry("B", "file");
  }

  @Test
  void read_shouldRefuseMissingAndOversizedFiles(@TempDir final Path dir) throws Exception {
    assertThatThrownBy(() -> EnvFile.read(dir.resolve("none.env")))
        .isInstanceOf(EnvFile.EnvFileException.class).hasMessageContaining("does not exist");
    final Path big = dir.resolve("big.env");
    Files.write(big, new byte[(int) EnvFile.MAX_SIZE + 1]);
    assertThatThrownBy(() -> EnvFile.read(big))
        .isInstanceOf(EnvFile.EnvFileException.class).hasMessageContaining("larger than");
    final Path ok = dir.resolve("ok.env");
    Files.writeString(ok, "A=1\n");
    assertThat(EnvFile.read(ok)).containsExactly(Map.entry("A", "1"));
  }
}
