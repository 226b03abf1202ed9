package io.relaypinner.handoff.records;

/**
 * The record names both sides of the pull handoff use (CONTRACT.md "Handoff wire shapes"), in one
 * place so the guest and the deployer can never disagree (one public guest image acknowledged
 * under another post type than its deployer queried).
 */
public final class HandoffNames {
  /** The owner's aggregate key holding one configuration entry per deployment token. */
  public static final String CONFIG_AGGREGATE_KEY = "vm-bootstrap-config";
  /** The post type of the guest's acknowledgement. */
  public static final String ACK_POST_TYPE = "vm-bootstrap-config-status";
  /** The {@code ref} of the guest's acknowledgement. */
  public static final String ACK_REF = "vm-bootstrap-config";
  /** Prefix of the SSH key comment {@code aleph-bootstrap-config:<owner>:<token>}. */
  public static final String LOCATOR_PREFIX = "aleph-bootstrap-config:";

  private HandoffNames() {}
}
