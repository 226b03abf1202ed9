package io.relaypinner.ipfs.dagpb;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.testkit.FuzzCheck;

/** Jazzer: DAG-PB blocks; whatever decodes is canonical. */
class DagPbFuzzer {
  @FuzzTest
  void decode(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> {
      final PbNode node = DagPb.decode(input);
      assertThat(DagPb.encode(node)).isEqualTo(input);
      DagPb.linkedCids(input);
    }, DagPbException.class);
  }
}
