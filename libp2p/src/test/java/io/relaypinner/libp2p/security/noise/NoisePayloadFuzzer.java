package io.relaypinner.libp2p.security.noise;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.testkit.FuzzCheck;

/** Jazzer: the remote's Noise handshake payload (identity key, signature, extensions). */
class NoisePayloadFuzzer {
  private static final byte[] REMOTE_STATIC = new byte[32];

  @FuzzTest
  void decode(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> HandshakePayload.decodeAndVerify(input, REMOTE_STATIC),
        ProtocolViolationException.class);
  }
}
