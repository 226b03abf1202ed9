package io.relaypinner.handoff.guest;

import io.relaypinner.handoff.records.HandoffNames;

/**
 * Names of the records the guest reads and writes (CONTRACT.md "Handoff wire shapes",
 * notes/handoff.md 3 and 7): the pull names come from {@link HandoffNames}, shared with the
 * deployer; the registration's names and the channel of the guest's own posts are added here.
 */
public final class GuestRecords {
  /** The owner's aggregate key holding one configuration entry per deployment token. */
  public static final String CONFIG_AGGREGATE_KEY = HandoffNames.CONFIG_AGGREGATE_KEY;
  /** Post type of the guest's acknowledgement. */
  public static final String ACK_POST_TYPE = HandoffNames.ACK_POST_TYPE;
  /** Ref of the acknowledgement. */
  public static final String ACK_REF = HandoffNames.ACK_REF;
  /** Post type of a bootstrap registration. */
  public static final String REGISTRATION_POST_TYPE = "relay-bootstrap-v2";
  /** Ref of a bootstrap registration. */
  public static final String REGISTRATION_REF = "simple-todo-bootstrap";
  /** Channel of the guest's own posts (acknowledgements, registrations). */
  public static final String CHANNEL = "simple-todo";
  /** Prefix of the SSH key comment carrying the owner and the deployment token. */
  public static final String LOCATOR_PREFIX = HandoffNames.LOCATOR_PREFIX;
  /** Trust mode of a registration without a verified owner authorization. */
  public static final String WALLET_SIGNED = "wallet-signed";
  /** Trust mode of a registration with an owner authorization binding its keys. */
  public static final String DUAL_KEY_ATTESTED = "dual-key-attested";

  private GuestRecords() {}
}
