package io.relaypinner.ipfs.dagcbor;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.testkit.FuzzCheck;

/** Jazzer: DAG-CBOR blocks; whatever decodes is canonical (encodes back to the same bytes). */
class DagCborFuzzer {
  @FuzzTest
  void decode(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> {
      final DagCborValue value = DagCbor.decode(input);
      assertThat(DagCbor.encode(value)).isEqualTo(input);
      DagCbor.links(input);
    }, DagCborException.class);
  }
}
