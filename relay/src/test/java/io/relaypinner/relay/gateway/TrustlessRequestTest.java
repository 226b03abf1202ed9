package io.relaypinner.relay.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Parsing of the trustless gateway's {@code Accept} header and {@code format} parameter. */
class TrustlessRequestTest {
  @Test
  void accept_shouldSkipEmptyItems_likeASemicolonAlone() throws Exception {
    // HttpRoutesFuzzer: "Accept: ;" made the route throw (a 500 and a stack trace).
    assertThat(TrustlessRequest.parse(";", Map.of()).kind())
        .isEqualTo(TrustlessRequest.Kind.PLAIN);
    assertThat(TrustlessRequest.parse(";;, ;,application/vnd.ipld.raw", Map.of()).kind())
        .isEqualTo(TrustlessRequest.Kind.RAW);
  }
}
