package io.relaypinner.multiformats;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.testkit.FuzzCheck;
import java.nio.charset.StandardCharsets;

/** Jazzer: PeerIds as bytes (pubsub from, identify) and text. */
class PeerIdFuzzer {
  @FuzzTest
  void decode(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> {
      final PeerId id = PeerId.fromBytes(input);
      assertThat(PeerId.parse(id.toString())).isEqualTo(id);
      id.publicKeyBytes();
    }, MultiformatException.class);
    FuzzCheck.accepts(() -> PeerId.parse(new String(input, StandardCharsets.UTF_8)),
        MultiformatException.class);
  }
}
