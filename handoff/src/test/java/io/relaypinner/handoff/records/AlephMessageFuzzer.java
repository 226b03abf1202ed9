package io.relaypinner.handoff.records;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.handoff.json.CanonicalJson;
import io.relaypinner.testkit.FuzzCheck;

/**
 * Jazzer: a records-API request body as the service reads it (strict JSON, then the Aleph
 * message, decoded and its signature checked).
 */
class AlephMessageFuzzer {
  private static final MessageVerifier VERIFIER = new MessageVerifier();

  @FuzzTest
  void verify(final byte[] input) throws Exception {
    final JsonNode[] node = new JsonNode[1];
    if (!FuzzCheck.accepts(() -> node[0] = CanonicalJson.parse(input),
        JsonProcessingException.class)) {
      return;
    }
    final JsonNode message = node[0].has("message") ? node[0].get("message") : node[0];
    FuzzCheck.accepts(() -> VERIFIER.verify(AlephMessage.fromJson(message)),
        RecordRejectedException.class);
  }
}
