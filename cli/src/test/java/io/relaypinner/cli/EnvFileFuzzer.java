package io.relaypinner.cli;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.testkit.FuzzCheck;
import java.util.List;

/** Jazzer: env files (run --env-file, the guest's relay.env). */
class EnvFileFuzzer {
  @FuzzTest
  void parse(final byte[] input) throws Exception {
    final String text = new String(input, java.nio.charset.StandardCharsets.UTF_8);
    FuzzCheck.accepts(() -> EnvFile.parse(List.of(text.split("\n", -1)), "fuzz"),
        EnvFile.EnvFileException.class);
  }
}
