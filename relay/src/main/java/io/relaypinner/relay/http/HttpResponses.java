package io.relaypinner.relay.http;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Builds the responses of the HTTP API: JSON bodies through the node's one shared
 * {@link ObjectMapper}, the JSON error shape of CONTRACT.md ({@code {"ok":false,"code","error"}})
 * and the plain-text 404 of spec 4. Every response carries {@code Content-Length}; CORS and
 * connection headers are added by the pipeline.
 */
public final class HttpResponses {
  /** Every JSON response says so, with the charset, the same way. */
  public static final AsciiString APPLICATION_JSON =
      AsciiString.cached("application/json; charset=utf-8");
  public static final AsciiString TEXT_PLAIN = AsciiString.cached("text/plain; charset=utf-8");

  private static final byte[] NOT_FOUND_BODY = "Not found".getBytes(StandardCharsets.US_ASCII);
  private static final int JSON_INITIAL_CAPACITY = 512;

  /** The JSON error body; the field order is part of the look of the API. */
  @JsonPropertyOrder({"ok", "code", "error"})
  public record ErrorBody(boolean ok, String code, String error) {}

  private final CompletableFuture<ObjectMapper> mapper;

  public HttpResponses(final ObjectMapper mapper) {
    this(CompletableFuture.completedFuture(Objects.requireNonNull(mapper, "mapper")));
  }

  private HttpResponses(final CompletableFuture<ObjectMapper> mapper) {
    this.mapper = mapper;
  }

  /**
   * Responses whose {@link #newObjectMapper()} is built on a short-lived thread of its own:
   * Jackson's set-up (some 375 classes on a cold JVM) then overlaps the node's start on the other
   * core instead of delaying the HTTP listener; the first use waits for it if it must.
   */
  public static HttpResponses withMapperBuiltInBackground() {
    final CompletableFuture<ObjectMapper> mapper = new CompletableFuture<>();
    final Thread builder = new Thread(() -> {
      try {
        mapper.complete(newObjectMapper());
      } catch (final RuntimeException | Error e) {
        mapper.completeExceptionally(e);
      }
    }, "relay-json-setup");
    builder.setDaemon(true);
    builder.start();
    return new HttpResponses(mapper);
  }

  /**
   * The node's JSON settings: the generator never closes our buffers, and request bodies may carry
   * fields we do not know (browsers' apps send extra fields; the JS relay ignores them).
   */
  public static ObjectMapper newObjectMapper() {
    final ObjectMapper mapper = new ObjectMapper();
    mapper.configure(JsonGenerator.Feature.AUTO_CLOSE_TARGET, false);
    mapper.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    return mapper;
  }

  /** The shared mapper, for routes that read JSON bodies. */
  public ObjectMapper mapper() {
    return mapper.join();
  }

  /** {@code value} as JSON, written straight into a pooled I/O buffer. */
  public FullHttpResponse json(final HttpResponseStatus status, final Object value) {
    final ByteBuf body = ByteBufAllocator.DEFAULT.ioBuffer(JSON_INITIAL_CAPACITY);
    try (ByteBufOutputStream out = new ByteBufOutputStream(body)) {
      // ByteBufOutputStream is also a DataOutput: pick the OutputStream overload.
      mapper().writeValue((OutputStream) out, value);
    } catch (final IOException | RuntimeException e) {
      body.release();
      // Our records always serialize; failing here is a bug, not the client's fault.
      throw new IllegalStateException("cannot serialize " + value.getClass().getName(), e);
    }
    return body(status, APPLICATION_JSON, body);
  }

  /** {@code value} as JSON bytes, for bodies that are cached and served many times. */
  public byte[] jsonBytes(final Object value) {
    try {
      return mapper().writeValueAsBytes(value);
    } catch (final IOException e) {
      throw new IllegalStateException("cannot serialize " + value.getClass().getName(), e);
    }
  }

  /** The JSON error shape {@code {"ok":false,"code":…,"error":…}}. */
  public FullHttpResponse error(
      final HttpResponseStatus status, final String code, final String message) {
    return json(status, new ErrorBody(false, code, message));
  }

  /** An {@link ErrorMapping} answer in the JSON error shape. */
  public FullHttpResponse error(final ErrorMapping.Answer answer) {
    return error(answer.status(), answer.code(), answer.message());
  }

  /**
   * 400 {@code invalid_address}: {@code text} is not a database address by the one rule of
   * {@code OrbitDbAddress.parse} (base58btc dag-cbor); every route that takes an address answers
   * so, with the same words.
   */
  public FullHttpResponse invalidAddress(final String text) {
    final String shown = text.length() <= 120 ? text : text.substring(0, 120) + "…";
    return error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_ADDRESS,
        "not an OrbitDB address /orbitdb/<base58btc dag-cbor CID> (zdpu…): " + shown);
  }

  /** Spec 4: any unknown path gets {@code 404} with the plain-text body {@code Not found}. */
  public static FullHttpResponse notFound() {
    return bytes(HttpResponseStatus.NOT_FOUND, TEXT_PLAIN, NOT_FOUND_BODY);
  }

  /** A UTF-8 text body. */
  public static FullHttpResponse text(final HttpResponseStatus status, final String text) {
    return bytes(status, TEXT_PLAIN, text.getBytes(StandardCharsets.UTF_8));
  }

  /** A body from a byte array, which is wrapped, not copied: do not change it afterwards. */
  public static FullHttpResponse bytes(
      final HttpResponseStatus status, final CharSequence contentType, final byte[] body) {
    return body(status, contentType, Unpooled.wrappedBuffer(body));
  }

  /** A body from a buffer; the response takes ownership of it. */
  public static FullHttpResponse body(
      final HttpResponseStatus status, final CharSequence contentType, final ByteBuf body) {
    final FullHttpResponse response =
        new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
    response.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, contentType)
        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
    return response;
  }

  /** {@code 204 No Content}. */
  public static FullHttpResponse noContent() {
    return new DefaultFullHttpResponse(
        HttpVersion.HTTP_1_1, HttpResponseStatus.NO_CONTENT, Unpooled.EMPTY_BUFFER);
  }
}
