package io.relaypinner.relay.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteRequest;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;

/**
 * The request rules the JSON {@code POST /pinning/*} routes share, as the JavaScript relay reads
 * them: a body of at most {@link #MAX_BODY} bytes (413 {@code payload_too_large}), empty or a JSON
 * object (else 400 {@code invalid_json}); a field is taken from the body when it is a non-empty
 * string after trimming, else from the first of its query parameters that is non-empty.
 */
final class JsonRequest {
  /** Largest accepted body; an address and an entry hash are well under 200 bytes each. */
  static final int MAX_BODY = 16 * 1024;

  private final RouteRequest request;
  private final JsonNode body;

  private JsonRequest(final RouteRequest request, final JsonNode body) {
    this.request = request;
    this.body = body;
  }

  /** A parsed request, or the error answer. */
  record Parsed(JsonRequest request, FullHttpResponse error) {}

  static Parsed parse(final RouteRequest request, final HttpResponses responses,
      final String example) {
    final ByteBuf content = request.content();
    if (content.readableBytes() > MAX_BODY) {
      return failed(responses, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
          ErrorCodes.PAYLOAD_TOO_LARGE, "request body above " + MAX_BODY + " bytes");
    }
    if (isBlank(content)) {
      return new Parsed(new JsonRequest(request, null), null);
    }
    final JsonNode json;
    try (InputStream in = new ByteBufInputStream(content.duplicate())) {
      json = responses.mapper().readTree(in);
    } catch (final JsonProcessingException e) {
      return failed(responses, HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_JSON,
          "request body is not valid JSON");
    } catch (final IOException e) {
      return failed(responses, HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_JSON,
          "request body cannot be read");
    }
    if (json == null || !json.isObject()) {
      return failed(responses, HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_JSON,
          "request body must be a JSON object such as " + example);
    }
    return new Parsed(new JsonRequest(request, json), null);
  }

  /**
   * The body's {@code field} when it is a non-empty string after trimming, else the first of
   * {@code queryNames} that is non-empty after trimming.
   */
  Optional<String> text(final String field, final String... queryNames) {
    if (body != null) {
      final JsonNode value = body.get(field);
      if (value != null && value.isTextual() && !value.textValue().trim().isEmpty()) {
        return Optional.of(value.textValue().trim());
      }
    }
    for (final String name : queryNames) {
      final Optional<String> value = request.queryParameter(name).map(String::trim)
          .filter(text -> !text.isEmpty());
      if (value.isPresent()) {
        return value;
      }
    }
    return Optional.empty();
  }

  private static Parsed failed(final HttpResponses responses, final HttpResponseStatus status,
      final String code, final String message) {
    return new Parsed(null, responses.error(status, code, message));
  }

  private static boolean isBlank(final ByteBuf body) {
    for (int i = body.readerIndex(); i < body.writerIndex(); i++) {
      final byte b = body.getByte(i);
      if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
        return false;
      }
    }
    return true;
  }
}
