package io.relaypinner.handoff.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.handoff.deploy.HandoffMode;
import io.relaypinner.handoff.deploy.LocalHostProvider;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The console's routes over plain HTTP with a deployer that waits for the test. */
class DeployConsoleTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path dir;

  private final CountDownLatch release = new CountDownLatch(1);
  private final List<String> calls = new CopyOnWriteArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private DeployConsole console;
  private String base;

  @BeforeEach
  void start() throws Exception {
    console = new DeployConsole((handoff, origin, progress) -> {
      calls.add(handoff.map(HandoffMode::wireName).orElse("auto") + " " + origin);
      progress.event("validating", "image test", 2);
      release.await(30, TimeUnit.SECONDS);
      throw new IllegalStateException("no host today");
    }, new LocalHostProvider(LocalHostProvider.Settings.defaults(dir), Clock.systemUTC()),
        Optional.empty(), Clock.systemUTC());
    base = "http://127.0.0.1:" + console.start("127.0.0.1", 0).getPort();
  }

  @AfterEach
  void stop() {
    release.countDown();
    console.close();
  }

  private HttpResponse<String> post(final String path, final String origin, final String body)
      throws Exception {
    final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (origin != null) {
      request.header("Origin", origin);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode get(final String path) throws Exception {
    return JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + path)).build(),
        HttpResponse.BodyHandlers.ofString()).body());
  }

  @Test
  void page_shouldBeServedWithAStrictCsp() throws Exception {
    final HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create(base + "/"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("content-security-policy")).get().asString()
        .startsWith("default-src 'none'; script-src 'sha256-").doesNotContain("unsafe");
    assertThat(page.body()).contains("deploy console").doesNotContain("src=", "href=");
  }

  @Test
  void deploy_shouldRunOneAtATime_andReportTheFailureWithItsProgress() throws Exception {
    final HttpResponse<String> first = post("/api/deploy", base, "{\"handoff\":\"pull\"}");
    assertThat(first.statusCode()).isEqualTo(202);
    final String id = JSON.readTree(first.body()).path("id").asText();
    assertThat(post("/api/deploy", base, "{\"handoff\":\"push\"}").statusCode()).isEqualTo(409);
    assertThat(get("/api/deploy/" + id).path("state").asText()).isEqualTo("running");
    release.countDown();
    await().atMost(Duration.ofSeconds(20)).until(() ->
        get("/api/deploy/" + id).path("state").asText().equals("failed"));
    final JsonNode job = get("/api/deploy/" + id);
    assertThat(job.path("error").asText()).isEqualTo("no host today");
    assertThat(job.path("events").get(0).path("stage").asText()).isEqualTo("validating");
    assertThat(calls).containsExactly("pull " + base);
    assertThat(get("/api/deployments").isArray()).isTrue();
  }

  @Test
  void post_shouldBeRefused_fromAnotherOrigin_withoutOne_orWithABadBody() throws Exception {
    assertThat(post("/api/deploy", "https://evil.example", "{}").statusCode()).isEqualTo(403);
    assertThat(post("/api/deploy", null, "{}").statusCode()).isEqualTo(403);
    assertThat(post("/api/erase", base, "x".repeat(DeployConsole.MAX_BODY + 1)).statusCode())
        .isEqualTo(400);
    assertThat(post("/api/deploy", base, "{\"handoff\":\"teleport\"}").statusCode())
        .isEqualTo(400);
    assertThat(post("/api/erase", base, "{\"id\":\"nothing-here\"}").statusCode())
        .isIn(400, 404);
    assertThat(calls).isEmpty();
  }

  @Test
  void request_shouldBeRefused_underAnotherHostName() throws Exception {
    final URI uri = URI.create(base);
    try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
      final OutputStream out = socket.getOutputStream();
      out.write(("GET /api/deployments HTTP/1.1\r\nHost: rebound.example:" + uri.getPort()
          + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      final InputStream in = socket.getInputStream();
      assertThat(new String(in.readNBytes(12), StandardCharsets.US_ASCII))
          .isEqualTo("HTTP/1.1 421");
    }
  }
}
