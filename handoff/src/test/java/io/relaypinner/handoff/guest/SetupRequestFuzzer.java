package io.relaypinner.handoff.guest;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.testkit.FuzzCheck;

/** Jazzer: the body of the setup endpoint ({@code POST /configure}), JSON from the network. */
class SetupRequestFuzzer {
  @FuzzTest
  void parse(final byte[] body) throws Exception {
    FuzzCheck.accepts(() -> ConfigureRequest.parse(body), ConfigureRejectedException.class);
  }
}
