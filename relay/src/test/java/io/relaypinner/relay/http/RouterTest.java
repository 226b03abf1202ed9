package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import org.junit.jupiter.api.Test;

class RouterTest {
  private static final RouteHandler A =
      RouteHandler.sync(r -> HttpResponses.text(HttpResponseStatus.OK, "a"));
  private static final RouteHandler B =
      RouteHandler.sync(r -> HttpResponses.text(HttpResponseStatus.OK, "b"));

  @Test
  void match_shouldFindExactRoute_whenMethodAndPathMatch() {
    final Router router = Router.builder().get("/health", A).post("/pinning/sync", B).build();
    assertThat(router.match(HttpMethod.GET, "/health"))
        .isEqualTo(new Router.Found("/health", A));
    assertThat(router.match(HttpMethod.POST, "/pinning/sync"))
        .isEqualTo(new Router.Found("/pinning/sync", B));
  }

  @Test
  void match_shouldServeHeadWithGet_whenNoHeadRouteIsRegistered() {
    final Router router = Router.builder().get("/health", A).build();
    assertThat(router.match(HttpMethod.HEAD, "/health")).isEqualTo(new Router.Found("/health", A));
    final Router explicit = Router.builder().get("/x", A).route(HttpMethod.HEAD, "/x", B).build();
    assertThat(explicit.match(HttpMethod.HEAD, "/x")).isEqualTo(new Router.Found("/x", B));
  }

  @Test
  void match_shouldListAllowedMethods_whenMethodIsWrong() {
    final Router router = Router.builder().get("/x", A).post("/x", B).build();
    assertThat(router.match(HttpMethod.DELETE, "/x"))
        .isEqualTo(new Router.MethodNotAllowed("/x", "GET, HEAD, POST, OPTIONS"));
    final Router postOnly = Router.builder().post("/pinning/sync", B).build();
    assertThat(postOnly.match(HttpMethod.GET, "/pinning/sync"))
        .isEqualTo(new Router.MethodNotAllowed("/pinning/sync", "POST, OPTIONS"));
  }

  @Test
  void match_shouldPreferExactThenLongestPrefix_whenSeveralMatch() {
    final Router router = Router.builder().getPrefix("/ipfs/", A).getPrefix("/ipfs/special/", B)
        .get("/ipfs/exact", B).build();
    assertThat(router.match(HttpMethod.GET, "/ipfs/bafy"))
        .isEqualTo(new Router.Found("/ipfs/*", A));
    assertThat(router.match(HttpMethod.GET, "/ipfs/special/x"))
        .isEqualTo(new Router.Found("/ipfs/special/*", B));
    assertThat(router.match(HttpMethod.GET, "/ipfs/exact"))
        .isEqualTo(new Router.Found("/ipfs/exact", B));
    assertThat(router.match(HttpMethod.GET, "/ipfs")).isEqualTo(Router.NotFound.INSTANCE);
    assertThat(router.routes()).containsExactly("/ipfs/*", "/ipfs/exact", "/ipfs/special/*");
  }

  @Test
  void match_shouldBeNotFound_whenPathIsUnknownOrDiffersByTrailingSlash() {
    final Router router = Router.builder().get("/health", A).build();
    assertThat(router.match(HttpMethod.GET, "/health/")).isEqualTo(Router.NotFound.INSTANCE);
    assertThat(router.match(HttpMethod.GET, "/HEALTH")).isEqualTo(Router.NotFound.INSTANCE);
    assertThat(router.routeOf("/nope")).isNull();
    assertThat(router.routeOf("/health")).isEqualTo("/health");
  }

  @Test
  void builder_shouldRejectDuplicatesOptionsAndRelativePaths() {
    assertThatThrownBy(() -> Router.builder().get("/x", A).get("/x", B))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("duplicate");
    assertThatThrownBy(() -> Router.builder().route(HttpMethod.OPTIONS, "/x", A))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Router.builder().get("health", A))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void pathOf_shouldStripQueryAndFragment_andAcceptAbsoluteForm() {
    assertThat(HttpDispatcher.pathOf("/health?x=1#y")).isEqualTo("/health");
    assertThat(HttpDispatcher.pathOf("/health#y?x")).isEqualTo("/health");
    assertThat(HttpDispatcher.pathOf("http://relay.example:9090/metrics?a")).isEqualTo("/metrics");
    assertThat(HttpDispatcher.pathOf("http://relay.example")).isEqualTo("/");
    assertThat(HttpDispatcher.pathOf("*")).isEqualTo("*");
  }

  @Test
  void bodyAuthorized_shouldAskTheCheckOfTheExactOrLongestPrefixRoute_andPassEveryOther() {
    final Router router = Router.builder()
        .authorizedBody(HttpMethod.POST, "/pins", "Bearer a"::equals)
        .authorizedBody(HttpMethod.POST, "/pins/*", "Bearer b"::equals)
        .build();
    assertThat(router.bodyAuthorized(HttpMethod.POST, "/pins", "Bearer a")).isTrue();
    assertThat(router.bodyAuthorized(HttpMethod.POST, "/pins", null)).isFalse();
    assertThat(router.bodyAuthorized(HttpMethod.POST, "/pins/abc", "Bearer a")).isFalse();
    assertThat(router.bodyAuthorized(HttpMethod.POST, "/pins/abc", "Bearer b")).isTrue();
    assertThat(router.bodyAuthorized(HttpMethod.PUT, "/pins", null)).isTrue();
    assertThat(router.bodyAuthorized(HttpMethod.POST, "/echo", null)).isTrue();
  }
}
