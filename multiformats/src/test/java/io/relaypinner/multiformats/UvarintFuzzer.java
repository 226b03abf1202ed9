package io.relaypinner.multiformats;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.testkit.FuzzCheck;
import java.util.Arrays;

/** Jazzer: unsigned varints (every length prefix on the wire); accepted ones are minimal. */
class UvarintFuzzer {
  @FuzzTest
  void decode(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> {
      final Uvarint.Decoded d = Uvarint.decode(input);
      assertThat(Uvarint.encode(d.value())).isEqualTo(Arrays.copyOf(input, d.length()));
    }, MultiformatException.class);
  }
}
