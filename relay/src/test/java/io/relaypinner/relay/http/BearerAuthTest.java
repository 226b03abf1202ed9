package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class BearerAuthTest {
  @Test
  void apiToken_shouldLetEveryRequestPass_whenUnset() {
    final BearerAuth auth = BearerAuth.apiToken(Optional.empty());

    assertThat(auth.hasTokens()).isFalse();
    assertThat(auth.permits(null)).isTrue();
    assertThat(auth.permits("Bearer anything")).isTrue();
  }

  @Test
  void apiToken_shouldNeedTheToken_caseInsensitiveSchemeAndTrimmed_whenSet() {
    final BearerAuth auth = BearerAuth.apiToken(Optional.of("s3cret"));

    assertThat(auth.permits("Bearer s3cret")).isTrue();
    assertThat(auth.permits("bEARER   s3cret  ")).isTrue();
    assertThat(auth.permits(null)).isFalse();
    assertThat(auth.permits("")).isFalse();
    assertThat(auth.permits("Bearer ")).isFalse();
    assertThat(auth.permits("Bearer s3cre")).isFalse();
    assertThat(auth.permits("Bearer s3cret2")).isFalse();
    assertThat(auth.permits("Basic s3cret")).isFalse();
    assertThat(auth.permits("Bearers3cret")).isFalse();
    assertThat(auth.permits("s3cret")).isFalse();
  }

  @Test
  void anyOf_shouldNameThePresentedToken_andRefuseEverything_whenNoneIsConfigured() {
    final BearerAuth auth = BearerAuth.anyOf(List.of("alice-token", "bob-token"));

    assertThat(auth.token("Bearer bob-token")).contains("bob-token");
    assertThat(auth.token("bearer alice-token ")).contains("alice-token");
    assertThat(auth.token("Bearer carol-token")).isEmpty();
    assertThat(auth.permits("Bearer alice-token")).isTrue();

    final BearerAuth none = BearerAuth.anyOf(List.of());
    assertThat(none.hasTokens()).isFalse();
    assertThat(none.permits(null)).isFalse();
    assertThat(none.token("Bearer ")).isEmpty();
  }

  @Test
  void apiTokenRequired_shouldAnswer401Unauthorized_withTheChallenge() throws Exception {
    final FullHttpResponse response =
        BearerAuth.apiTokenRequired(new HttpResponses(HttpResponses.newObjectMapper()));
    try {
      assertThat(response.status().code()).isEqualTo(401);
      assertThat(response.headers().get(HttpHeaderNames.WWW_AUTHENTICATE)).isEqualTo("Bearer");
      final JsonNode body = new ObjectMapper().readTree(
          response.content().toString(StandardCharsets.UTF_8));
      assertThat(body.get("code").asText()).isEqualTo(ErrorCodes.UNAUTHORIZED);
      assertThat(body.get("error").asText())
          .isEqualTo("Authorization: Bearer <RELAY_API_TOKEN> required");
    } finally {
      response.release();
    }
  }
}
