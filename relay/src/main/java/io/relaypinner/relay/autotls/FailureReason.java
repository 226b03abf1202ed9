package io.relaypinner.relay.autotls;

import java.util.Locale;

/** Why one AutoTLS attempt failed: a bounded set, the {@code reason} label of the metrics. */
public enum FailureReason {
  /** No address the broker could dial back (none public, and not forced). */
  NO_ADDRESS,
  /** The broker answered 4xx (e.g. the dial-back failed or the peer is denied). */
  BROKER_REFUSED,
  /** The broker answered 429 (rate limited). */
  BROKER_RATE_LIMITED,
  /** The broker answered 5xx or could not be reached. */
  BROKER_UNAVAILABLE,
  /** The broker did not answer in time. */
  BROKER_TIMEOUT,
  /** The broker's PeerID authentication failed. */
  BROKER_AUTH,
  /** The ACME server refused with a rate limit. */
  ACME_RATE_LIMITED,
  /** Any other ACME error (network, server problem, invalid challenge or order). */
  ACME_ERROR,
  /** Writing the certificate or account key failed. */
  STORAGE;

  /** The metric label, e.g. {@code broker_refused}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
