package io.relaypinner.handoff.records.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.relaypinner.handoff.records.RecordJson;

/** JSON responses of the record service, with the error shape {@code {ok:false, code, error}}. */
final class RecordHttpResponses {
  private RecordHttpResponses() {}

  static FullHttpResponse json(final int status, final JsonNode body) {
    final byte[] bytes;
    try {
      bytes = RecordJson.MAPPER.writeValueAsBytes(body);
    } catch (final JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize a response", e);
    }
    final FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
        HttpResponseStatus.valueOf(status), Unpooled.wrappedBuffer(bytes));
    response.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, "application/json; charset=utf-8")
        .setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length)
        // Browser deployers read records cross-origin, as they do from public Aleph nodes.
        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*");
    return response;
  }

  static ObjectNode errorBody(final String code, final String message) {
    final ObjectNode body = JsonNodeFactory.instance.objectNode();
    body.put("ok", false);
    body.put("code", code);
    body.put("error", message);
    return body;
  }

  static FullHttpResponse error(final int status, final String code, final String message) {
    return json(status, errorBody(code, message));
  }
}
