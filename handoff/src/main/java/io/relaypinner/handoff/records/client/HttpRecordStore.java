package io.relaypinner.handoff.records.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.common.Failures;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.ErrorCodes;
import io.relaypinner.handoff.records.PostPage;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.PublishResult;
import io.relaypinner.handoff.records.RecordJson;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.RecordStoreException;
import io.relaypinner.handoff.wallet.EthAddress;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link RecordStore} over HTTP: the Aleph API subset ({@code POST /api/v0/messages},
 * {@code GET /api/v0/aggregates/<address>.json}, {@code GET /api/v0/posts.json}) of a public Aleph
 * node or of the embedded record service, with the JDK {@link HttpClient}. Every request has a
 * timeout and every response body is read up to a size limit. Status mapping: 2xx is success
 * (202 = pending), 404 on aggregates = none, any other 4xx is a {@link RecordRejectedException}
 * carrying the service's {@code code} (or {@code http_<status>} for servers without the JSON error
 * shape), 5xx and transport failures are a {@link RecordStoreException}.
 */
public final class HttpRecordStore implements RecordStore {
  /** Default per-request timeout. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
  /** Default largest response body. */
  public static final int DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

  private final URI base;
  private final HttpClient http;
  private final Duration timeout;
  private final int maxResponseBytes;

  /**
   * @param base the API host, e.g. {@code https://api.aleph.im} or {@code http://127.0.0.1:8181}
   */
  public HttpRecordStore(final URI base, final Duration timeout, final int maxResponseBytes) {
    Objects.requireNonNull(base, "base");
    final String text = base.toString();
    this.base = URI.create(text.endsWith("/") ? text.substring(0, text.length() - 1) : text);
    if (!"http".equals(this.base.getScheme()) && !"https".equals(this.base.getScheme())) {
      throw new IllegalArgumentException("record store URL must be http or https: " + base);
    }
    this.timeout = Objects.requireNonNull(timeout, "timeout");
    this.maxResponseBytes = maxResponseBytes;
    this.http = HttpClient.newBuilder()
        .connectTimeout(timeout)
        .followRedirects(HttpClient.Redirect.NEVER)
        .build();
  }

  /** With {@link #DEFAULT_TIMEOUT} and {@link #DEFAULT_MAX_RESPONSE_BYTES}. */
  public HttpRecordStore(final URI base) {
    this(base, DEFAULT_TIMEOUT, DEFAULT_MAX_RESPONSE_BYTES);
  }

  /** The API host. */
  public URI base() {
    return base;
  }

  @Override
  public PublishResult publish(final AlephMessage message) {
    final ObjectNode body = JsonNodeFactory.instance.objectNode();
    body.put("sync", true);
    body.set("message", message.toJson());
    final byte[] bytes;
    try {
      bytes = RecordJson.MAPPER.writeValueAsBytes(body);
    } catch (final IOException e) {
      throw new IllegalStateException("cannot serialize a message", e);
    }
    final HttpRequest request = HttpRequest.newBuilder(base.resolve("/api/v0/messages"))
        .timeout(timeout)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(bytes))
        .build();
    final Response response = send(request);
    if (response.status == 202) {
      return new PublishResult(message.itemHash(), PublishResult.PENDING);
    }
    if (response.status / 100 != 2) {
      throw failure(response, "publish");
    }
    final JsonNode json = response.json();
    final String status = json.path("message_status").asText("");
    if ("rejected".equals(status)) {
      throw new RecordRejectedException(422, json.path("code").asText("rejected"),
          json.path("error").asText("the message was rejected"));
    }
    if ("error".equals(json.path("publication_status").path("status").asText(""))) {
      throw new RecordStoreException("publication failed: " + abbreviate(response.bodyText()));
    }
    return new PublishResult(message.itemHash(),
        PublishResult.PENDING.equals(status) ? PublishResult.PENDING : PublishResult.PROCESSED);
  }

  @Override
  public Map<String, JsonNode> aggregates(final EthAddress owner, final Collection<String> keys) {
    String path = "/api/v0/aggregates/" + owner + ".json";
    if (!keys.isEmpty()) {
      path += "?keys=" + URLEncoder.encode(String.join(",", keys), StandardCharsets.UTF_8);
    }
    final Response response = send(HttpRequest.newBuilder(base.resolve(path))
        .timeout(timeout).GET().build());
    if (response.status == 404) {
      return Map.of();
    }
    if (response.status != 200) {
      throw failure(response, "aggregates");
    }
    final JsonNode data = response.json().get("data");
    if (data == null || !data.isObject()) {
      throw new RecordStoreException("aggregates response has no data object");
    }
    final Map<String, JsonNode> out = new LinkedHashMap<>();
    data.properties().forEach(entry -> {
      if (keys.isEmpty() || keys.contains(entry.getKey())) {
        out.put(entry.getKey(), entry.getValue());
      }
    });
    return out;
  }

  @Override
  public PostPage posts(final PostQuery query) {
    final Response response = send(HttpRequest.newBuilder(
        base.resolve("/api/v0/posts.json?" + query.toQueryString())).timeout(timeout).GET()
        .build());
    if (response.status != 200) {
      throw failure(response, "posts");
    }
    final JsonNode json = response.json();
    final JsonNode posts = json.get("posts");
    if (posts == null || !posts.isArray()) {
      throw new RecordStoreException("posts response has no posts array");
    }
    final List<PostRecord> out = new ArrayList<>(posts.size());
    for (final JsonNode post : posts) {
      out.add(PostRecord.fromJson(post));
    }
    return new PostPage(out, json.path("pagination_page").asInt(query.page()),
        json.path("pagination_per_page").asInt(query.pagination()),
        json.path("pagination_total").asLong(out.size()));
  }

  private RuntimeException failure(final Response response, final String what) {
    if (response.status >= 400 && response.status < 500) {
      String code = "http_" + response.status;
      String message = abbreviate(response.bodyText());
      try {
        final JsonNode json = RecordJson.MAPPER.readTree(response.body);
        if (json != null && json.path("code").isTextual()) {
          code = json.get("code").textValue();
          message = json.path("error").asText(message);
        }
      } catch (final IOException e) {
        // Not our JSON error shape (public Aleph answers some errors in plain text).
      }
      if (response.status == 413) {
        code = ErrorCodes.PAYLOAD_TOO_LARGE;
      }
      return new RecordRejectedException(response.status, code, what + ": " + message);
    }
    return new RecordStoreException(what + ": HTTP " + response.status + " from " + base + ": "
        + abbreviate(response.bodyText()));
  }

  private record Response(int status, byte[] body) {
    String bodyText() {
      return new String(body, StandardCharsets.UTF_8);
    }

    JsonNode json() {
      try {
        final JsonNode node = RecordJson.MAPPER.readTree(body);
        if (node == null || !node.isObject()) {
          throw new RecordStoreException("response is not a JSON object");
        }
        return node;
      } catch (final IOException e) {
        throw new RecordStoreException("response is not JSON: " + e.getMessage(), e);
      }
    }
  }

  private Response send(final HttpRequest request) {
    // The request timeout covers the wait for headers; this deadline also bounds the body.
    final CompletableFuture<HttpResponse<byte[]>> future = http.sendAsync(request,
        info -> new LimitedBodySubscriber(maxResponseBytes));
    try {
      final HttpResponse<byte[]> response =
          future.get(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
      return new Response(response.statusCode(), response.body());
    } catch (final TimeoutException e) {
      future.cancel(true);
      throw new RecordStoreException(request.method() + " " + request.uri() + " timed out after "
          + timeout, e);
    } catch (final ExecutionException e) {
      final Throwable cause = Failures.unwrap(e);
      if (cause instanceof HttpTimeoutException) {
        throw new RecordStoreException(request.method() + " " + request.uri()
            + " timed out after " + timeout, cause);
      }
      throw new RecordStoreException(request.method() + " " + request.uri() + " failed: "
          + cause, cause);
    } catch (final InterruptedException e) {
      future.cancel(true);
      Thread.currentThread().interrupt();
      throw new RecordStoreException("interrupted during " + request.uri(), e);
    }
  }

  private static String abbreviate(final String text) {
    return text.length() > 200 ? text.substring(0, 200) + "…" : text;
  }
}
