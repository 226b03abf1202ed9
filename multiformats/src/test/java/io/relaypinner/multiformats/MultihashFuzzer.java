package io.relaypinner.multiformats;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.testkit.FuzzCheck;

/** Jazzer: multihash bytes; accepted ones are canonical. */
class MultihashFuzzer {
  @FuzzTest
  void decode(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> assertThat(Multihash.decode(input).bytes()).isEqualTo(input),
        MultiformatException.class);
  }
}
