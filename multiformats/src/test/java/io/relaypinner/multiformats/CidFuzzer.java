package io.relaypinner.multiformats;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.testkit.FuzzCheck;
import java.util.Arrays;

/** Jazzer: CIDs as bytes (blocks, bitswap) and as text (URLs, JSON). */
class CidFuzzer {
  @FuzzTest
  void decode(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> {
      final Cid cid = Cid.fromBytes(input);
      assertThat(cid.bytes()).isEqualTo(input);
      assertThat(Cid.parse(cid.toString())).isEqualTo(cid);
    }, MultiformatException.class);
    FuzzCheck.accepts(() -> {
      final Cid.Decoded d = Cid.read(input, 0, input.length);
      assertThat(Arrays.copyOf(input, d.length())).isEqualTo(d.cid().bytes());
    }, MultiformatException.class);
    final String text = new String(input, java.nio.charset.StandardCharsets.UTF_8);
    FuzzCheck.accepts(() -> {
      final Cid cid = Cid.parse(text);
      assertThat(Cid.fromBytes(cid.bytes())).isEqualTo(cid);
    }, MultiformatException.class);
  }
}
