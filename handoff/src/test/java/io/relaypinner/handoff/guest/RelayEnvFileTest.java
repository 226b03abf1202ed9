package io.relaypinner.handoff.guest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.common.EnvFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RelayEnvFileTest {
  @Test
  void write_shouldGiveBackEveryValue_asTheRelaysParserReadsIt(@TempDir final Path dir)
      throws Exception {
    final Path file = dir.resolve("relay.env");
    final Map<String, String> values = new LinkedHashMap<>();
    values.put("DATASTORE_PATH", dir.resolve(" data dir ").toString());
    values.put("PROXY_HOSTNAME", "relay.example.org");
    values.put("ALEPH_BOOTSTRAP_REGISTRATION_ID", "'quoted' # = id");
    RelayEnvFile.write(file, values, "written by a test\nread by: relay-pinner run --env-file");

    assertThat(RelayEnvFile.read(file)).containsExactlyEntriesOf(values);
    assertThat(EnvFile.read(file)).containsExactlyEntriesOf(values);
  }

  @Test
  void write_shouldRefuseALineBreak_andKeepTheFileItHad(@TempDir final Path dir)
      throws Exception {
    final Path file = dir.resolve("relay.env");
    RelayEnvFile.write(file, Map.of("A", "1"), "first");
    assertThatThrownBy(() -> RelayEnvFile.write(file, Map.of("A", "1\nB=2"), "second"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("A");
    assertThat(RelayEnvFile.read(file)).containsExactly(Map.entry("A", "1"));
  }

  @Test
  void read_shouldRefuseABadLine_asRunDoes(@TempDir final Path dir) throws Exception {
    final Path file = dir.resolve("relay.env");
    Files.writeString(file, "A=1\nthis is not a setting\n");
    assertThatThrownBy(() -> RelayEnvFile.read(file))
        .isInstanceOf(EnvFile.EnvFileException.class)
        .hasMessage(file + " line 2: expected KEY=VALUE");
  }
}
