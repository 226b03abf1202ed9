package io.relaypinner.common;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.testkit.FuzzCheck;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** Jazzer: env files (run --env-file, the guest's relay.env). */
class EnvFileFuzzer {
  @FuzzTest
  void parse(final byte[] input) throws Exception {
    final String text = new String(input, StandardCharsets.UTF_8);
    // Lines as EnvFile.read gets them (BufferedReader: \n, \r or \r\n end a line).
    final List<String> lines = List.of(text.split("\r\n|\r|\n", -1));
    FuzzCheck.accepts(() -> {
      final Map<String, String> values = EnvFile.parse(lines, "fuzz");
      // Whatever the reader accepts, the writer writes so that it reads back the same.
      final String written = EnvFile.format(values, "fuzz");
      final Map<String, String> back =
          EnvFile.parse(List.of(written.split("\r\n|\r|\n", -1)), "written");
      if (!back.equals(values)) {
        throw new AssertionError("round trip changed " + values + " into " + back);
      }
    }, EnvFile.EnvFileException.class);
  }
}
