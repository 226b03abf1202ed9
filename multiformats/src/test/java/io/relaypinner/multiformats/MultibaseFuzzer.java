package io.relaypinner.multiformats;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.multiformats.Multibase.Base;
import io.relaypinner.testkit.FuzzCheck;
import java.util.Locale;

/** Jazzer: multibase text (CIDs and keys in URLs and JSON); accepted text encodes back. */
class MultibaseFuzzer {
  @FuzzTest
  void decode(final byte[] input) throws Exception {
    final String text = new String(input, java.nio.charset.StandardCharsets.UTF_8);
    FuzzCheck.accepts(() -> {
      final byte[] data = Multibase.decode(text);
      final Base base = Multibase.baseOf(text);
      final String again = Multibase.encode(base, data);
      if (base == Base.BASE58BTC || base == Base.BASE64 || base == Base.BASE64URL) {
        assertThat(again).isEqualTo(text);
      } else {
        assertThat(again.toLowerCase(Locale.ROOT)).isEqualTo(text.toLowerCase(Locale.ROOT));
      }
    }, MultiformatException.class);
  }
}
