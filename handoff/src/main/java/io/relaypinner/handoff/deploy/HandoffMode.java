package io.relaypinner.handoff.deploy;

import java.util.Locale;

/** How a guest learns its deployment (spec 3.2, 3.3). */
public enum HandoffMode {
  /** The deployer calls the guest's plain-HTTP setup endpoint ({@code POST /configure}). */
  PUSH,
  /** The guest fetches an aggregate entry of the deployer and acknowledges it with a post. */
  PULL;

  /** The lower-case name used on the command line and in results. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
