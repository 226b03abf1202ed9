package io.relaypinner.handoff.guest;

/**
 * Names of the records the guest reads and writes (CONTRACT.md "Handoff wire shapes",
 * notes/handoff.md 3 and 7). One constant per name, shared by guest and deployer, so the two can
 * never disagree (the public orbitdb image acknowledged under a type the deployer never queried).
 */
public final class GuestRecords {
  /** The owner's aggregate key holding one configuration entry per deployment token. */
  public static final String CONFIG_AGGREGATE_KEY = "vm-bootstrap-config";
  /** Post type of the guest's acknowledgement. */
  public static final String ACK_POST_TYPE = "vm-bootstrap-config-status";
  /** Ref of the acknowledgement. */
  public static final String ACK_REF = "vm-bootstrap-config";
  /** Post type of a bootstrap registration. */
  public static final String REGISTRATION_POST_TYPE = "relay-bootstrap-v2";
  /** Ref of a bootstrap registration. */
  public static final String REGISTRATION_REF = "simple-todo-bootstrap";
  /** Channel of the guest's own posts (acknowledgements, registrations). */
  public static final String CHANNEL = "simple-todo";
  /** Prefix of the SSH key comment carrying the owner and the deployment token. */
  public static final String LOCATOR_PREFIX = "aleph-bootstrap-config:";
  /** Trust mode of a registration without a verified owner authorization. */
  public static final String WALLET_SIGNED = "wallet-signed";
  /** Trust mode of a registration with an owner authorization binding its keys. */
  public static final String DUAL_KEY_ATTESTED = "dual-key-attested";

  private GuestRecords() {}
}
