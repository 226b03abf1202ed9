package io.relaypinner.relay.http;

/**
 * The {@code code} values of JSON errors ({@code {"ok":false,"code":…,"error":…}}), CONTRACT.md
 * "HTTP details". Codes are snake_case; the ones marked "ours" are not in the JavaScript relay.
 */
public final class ErrorCodes {
  /** 405: known path, method not served there. */
  public static final String METHOD_NOT_ALLOWED = "method_not_allowed";
  /** 413: request body above the limit. */
  public static final String PAYLOAD_TOO_LARGE = "payload_too_large";
  /** 431 (ours): request line or header block above the limit. */
  public static final String HEADERS_TOO_LARGE = "headers_too_large";
  /** 400 (ours): bytes that are not HTTP/1.1 (bad request line, bad chunk, bad header). */
  public static final String BAD_REQUEST = "bad_request";
  /** 500 (ours): a route failed in a way it did not handle itself; details go to the log. */
  public static final String INTERNAL_ERROR = "internal_error";

  /** 400: {@code /ipfs/} without a CID, or one that does not parse. */
  public static final String INVALID_CID = "invalid_cid";
  /** 400: bad percent-encoding or non-UTF-8 bytes in an {@code /ipfs/} path. */
  public static final String INVALID_PATH_ENCODING = "invalid_path_encoding";
  /** 400: an {@code /ipfs/} target that is a directory (directories are not listed). */
  public static final String DIRECTORY_PATH_REQUIRED = "directory_path_required";
  /** 404: content not pinned here, a missing path or a missing block. */
  public static final String CONTENT_NOT_FOUND = "content_not_found";
  /** 503: the content store cannot take or serve the request now. */
  public static final String IPFS_UNAVAILABLE = "ipfs_unavailable";
  /** 503: a shared store (S3 blocks, PostgreSQL metadata) is unreachable; retry later. */
  public static final String STORE_UNAVAILABLE = "store_unavailable";
  /**
   * 507 (ours): the storage quota {@code RELAY_STORAGE_MAX_BYTES} is reached; new content (a
   * pin, an import, a gateway fetch) is refused until garbage collection frees room.
   */
  public static final String STORAGE_FULL = "storage_full";
  /**
   * 503: the gateway's network fallback already has all the bytes in flight the node allows (all
   * requests together); retry later.
   */
  public static final String FALLBACK_BUSY = "fallback_busy";
  /**
   * 503: the node budget's gateway memory (CAR plans in progress, fallback blocks) has no room
   * for another CAR plan; retry later.
   */
  public static final String CAR_BUSY = "car_busy";
  /** 504: the {@code /ipfs/} network fallback did not finish within its time limit. */
  public static final String GATEWAY_TIMEOUT = "gateway_timeout";
  /** 416 (ours): a {@code Range} outside the content. */
  public static final String RANGE_NOT_SATISFIABLE = "range_not_satisfiable";

  /** 400: a {@code POST /pinning/sync} or {@code /pinning/has-entry} body that is not a JSON object. */
  public static final String INVALID_JSON = "invalid_json";
  /** 400: {@code POST /pinning/sync} or {@code /pinning/has-entry} without an address. */
  public static final String MISSING_DB_ADDRESS = "missing_db_address";
  /** 400: {@code POST /pinning/has-entry} without an entry hash in body or query. */
  public static final String MISSING_ENTRY_HASH = "missing_entry_hash";
  /** 400 (ours): {@code POST /pinning/has-entry} with an entry hash that is not a CID. */
  public static final String INVALID_ENTRY_HASH = "invalid_entry_hash";
  /**
   * 400: an address that is not a database address, {@code /orbitdb/<base58btc dag-cbor CID>}
   * ({@code OrbitDbAddress.parse}, the one rule).
   */
  public static final String INVALID_ADDRESS = "invalid_address";
  /** 401: {@code RELAY_API_TOKEN} is set and the bearer token is missing or wrong. */
  public static final String UNAUTHORIZED = "unauthorized";
  /** 404: {@code GET /pinning/databases?address=…} for an address never synced. */
  public static final String DATABASE_NOT_FOUND = "database_not_found";
  /**
   * 403 (ours): {@code POST /pinning/import} of a database the relay does not follow
   * ({@code RELAY_ORBITDB_ALLOW} / {@code RELAY_ORBITDB_DENY}); nothing was stored.
   */
  public static final String DATABASE_DENIED = "database_denied";
  /** 500: the sync failed. */
  public static final String SYNC_FAILED = "sync_failed";
  /** 504: the sync did not finish within {@code RELAY_PINNING_SYNC_TIMEOUT_MS}; it keeps going. */
  public static final String SYNC_TIMEOUT = "sync_timeout";

  private ErrorCodes() {}
}
