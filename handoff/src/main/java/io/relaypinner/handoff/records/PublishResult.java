package io.relaypinner.handoff.records;

/**
 * What a store said about a published message: {@code processed} (stored and visible) or
 * {@code pending} (accepted, visible later: public Aleph answers 202 this way).
 */
public record PublishResult(String itemHash, String status) {
  public static final String PROCESSED = "processed";
  public static final String PENDING = "pending";

  /** True when the message is already visible to readers. */
  public boolean processed() {
    return PROCESSED.equals(status);
  }
}
