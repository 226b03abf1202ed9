package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * The deployer's plain HTTP calls to a guest: the setup endpoint ({@code GET /health},
 * {@code GET /metadata}, {@code POST /configure}) and the relay's {@code GET /health}. Every
 * request has a timeout, redirects are not followed, and bodies are read up to
 * {@link #MAX_BODY_BYTES}; a larger or non-JSON body is an {@link IOException}.
 */
public final class GuestHttpClient {
  /** Largest response body read. */
  public static final int MAX_BODY_BYTES = 1024 * 1024;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** A response: its status and JSON body (a missing node when the body was empty). */
  public record Response(int status, JsonNode body) {
    public boolean ok() {
      return status / 100 == 2;
    }
  }

  private final HttpClient http;
  private final Duration timeout;

  public GuestHttpClient(final Duration timeout) {
    this.timeout = Objects.requireNonNull(timeout, "timeout");
    this.http = HttpClient.newBuilder()
        .connectTimeout(timeout)
        .followRedirects(HttpClient.Redirect.NEVER)
        .version(HttpClient.Version.HTTP_1_1)
        .build();
  }

  /** {@code GET url}. */
  public Response get(final URI url) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(url).timeout(timeout).GET()
        .header("Accept", "application/json").build());
  }

  /** {@code POST url} with a JSON body. */
  public Response postJson(final URI url, final JsonNode body)
      throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(url).timeout(timeout)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(MAPPER.writeValueAsBytes(body))).build());
  }

  private Response send(final HttpRequest request) throws IOException, InterruptedException {
    final HttpResponse<InputStream> response =
        http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    final byte[] bytes;
    try (InputStream in = response.body()) {
      bytes = in.readNBytes(MAX_BODY_BYTES + 1);
    }
    if (bytes.length > MAX_BODY_BYTES) {
      throw new IOException(request.uri() + " answered more than " + MAX_BODY_BYTES + " bytes");
    }
    if (bytes.length == 0) {
      return new Response(response.statusCode(), MAPPER.missingNode());
    }
    try {
      return new Response(response.statusCode(), MAPPER.readTree(bytes));
    } catch (final IOException e) {
      throw new IOException(request.uri() + " answered " + response.statusCode()
          + " with a body that is not JSON: " + clip(new String(bytes, StandardCharsets.UTF_8)));
    }
  }

  static String clip(final String text) {
    final String flat = text.replaceAll("\\s+", " ").strip();
    return flat.length() <= 160 ? flat : flat.substring(0, 160) + "…";
  }
}
