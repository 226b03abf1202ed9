package io.relaypinner.multiformats;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.testkit.FuzzCheck;
import java.nio.charset.StandardCharsets;

/** Jazzer: multiaddrs as bytes (identify) and text (config, dial); accepted ones round-trip. */
class MultiaddrFuzzer {
  @FuzzTest
  void decode(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> {
      final Multiaddr ma = Multiaddr.fromBytes(input);
      assertThat(ma.bytes()).isEqualTo(input);
      assertThat(Multiaddr.parse(ma.toString())).isEqualTo(ma);
    }, MultiformatException.class);
    final String text = new String(input, StandardCharsets.UTF_8);
    FuzzCheck.accepts(() -> {
      final Multiaddr ma = Multiaddr.parse(text);
      assertThat(Multiaddr.fromBytes(ma.bytes())).isEqualTo(ma);
      assertThat(Multiaddr.parse(ma.toString())).isEqualTo(ma);
    }, MultiformatException.class);
  }
}
