package io.relaypinner.handoff.records;

/**
 * A message or request the record store refused because of what it holds (bad signature, wrong
 * hash, forbidden FORGET, malformed query...): the submitter's fault. Carries the JSON error
 * {@code code} (see {@link ErrorCodes}) and the HTTP status the service answers with.
 */
public final class RecordRejectedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String code;
  private final int httpStatus;

  public RecordRejectedException(final int httpStatus, final String code, final String message) {
    super(message);
    this.code = code;
    this.httpStatus = httpStatus;
  }

  /** 422 with this code: the message itself is invalid. */
  public static RecordRejectedException invalid(final String code, final String message) {
    return new RecordRejectedException(422, code, message);
  }

  /** The {@link ErrorCodes} value. */
  public String code() {
    return code;
  }

  /** The HTTP status of the rejection. */
  public int httpStatus() {
    return httpStatus;
  }
}
