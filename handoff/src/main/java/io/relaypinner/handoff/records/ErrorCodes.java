package io.relaypinner.handoff.records;

/**
 * The {@code code} values of the record service's JSON errors
 * ({@code {"ok":false,"code","error"}}), shared by the service that writes them and the client
 * that reads them.
 */
public final class ErrorCodes {
  /** 400: the request body is not JSON (or not one strict JSON value). */
  public static final String INVALID_JSON = "invalid_json";
  /** 400: JSON, but not {@code {"sync":bool,"message":{…}}}. */
  public static final String INVALID_REQUEST = "invalid_request";
  /** 400: a bad query parameter of {@code posts.json}. */
  public static final String INVALID_QUERY = "invalid_query";
  /** 400: the address in the path is not an Ethereum address. */
  public static final String INVALID_ADDRESS = "invalid_address";
  /** 422: a field of the envelope or of the content is missing or has the wrong type. */
  public static final String INVALID_MESSAGE = "invalid_message";
  /** 422: {@code chain} is not {@code ETH}. */
  public static final String UNSUPPORTED_CHAIN = "unsupported_chain";
  /** 422: {@code type} is not AGGREGATE, POST or FORGET. */
  public static final String UNSUPPORTED_TYPE = "unsupported_type";
  /** 422: {@code item_type} is not {@code inline}. */
  public static final String UNSUPPORTED_ITEM_TYPE = "unsupported_item_type";
  /** 422: {@code item_hash} is not the SHA-256 of {@code item_content}. */
  public static final String ITEM_HASH_MISMATCH = "item_hash_mismatch";
  /** 422: the signature is missing, malformed, or not made by {@code sender}. */
  public static final String INVALID_SIGNATURE = "invalid_signature";
  /** 422: the content's {@code address} is not the {@code sender}. */
  public static final String SENDER_MISMATCH = "sender_mismatch";
  /** 403: a FORGET names a message of another sender. */
  public static final String FORBIDDEN = "forbidden";
  /** 410: the message was forgotten and cannot be published again. */
  public static final String MESSAGE_FORGOTTEN = "message_forgotten";
  /** 413: the body or {@code item_content} is over the limit. */
  public static final String PAYLOAD_TOO_LARGE = "payload_too_large";
  /** 404: no aggregate of that address (and keys). */
  public static final String AGGREGATE_NOT_FOUND = "aggregate_not_found";
  /** 404: no such route. */
  public static final String NOT_FOUND = "not_found";
  /** 405: a known path with another method. */
  public static final String METHOD_NOT_ALLOWED = "method_not_allowed";
  /** 503: the service's work queue is full; retry later. */
  public static final String BUSY = "busy";
  /** 507: the store holds its maximum number of messages. */
  public static final String STORE_FULL = "store_full";
  /** 500: our bug or a storage failure. */
  public static final String INTERNAL_ERROR = "internal_error";

  private ErrorCodes() {}
}
