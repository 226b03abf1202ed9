package io.relaypinner.relay.http;

import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * A request refused before routing (too large, malformed). The guards pass it down the pipeline
 * instead of answering themselves, so that the dispatcher writes the answer in request order;
 * the connection is closed after it, since the rest of the stream cannot be trusted.
 *
 * @param status the response status
 * @param code the JSON error code, also the metrics reason
 * @param message the JSON error text
 */
record RejectedRequest(HttpResponseStatus status, String code, String message) {
  static RejectedRequest requestLineTooLong(final int limit) {
    return new RejectedRequest(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
        ErrorCodes.HEADERS_TOO_LARGE, "request line is longer than " + limit + " bytes");
  }

  static RejectedRequest headersTooLarge(final int limit) {
    return new RejectedRequest(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
        ErrorCodes.HEADERS_TOO_LARGE, "request headers are larger than " + limit + " bytes");
  }

  static RejectedRequest payloadTooLarge(final int limit) {
    return new RejectedRequest(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
        ErrorCodes.PAYLOAD_TOO_LARGE, "request body is larger than " + limit + " bytes");
  }

  static RejectedRequest badRequest() {
    return new RejectedRequest(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
        "malformed HTTP request");
  }
}
