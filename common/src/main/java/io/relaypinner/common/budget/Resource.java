package io.relaypinner.common.budget;

import java.util.Locale;

/**
 * What a {@link Scope} budgets. Counts ({@link #CONNECTIONS}, {@link #STREAMS}, {@link #WORK})
 * are reserved one at a time; sizes ({@link #MEMORY}, {@link #DISK}) in bytes, before they are
 * allocated or written.
 */
public enum Resource {
  /** Transport connections, half-open (still in their handshake) included. */
  CONNECTIONS,
  /** Streams of established connections. */
  STREAMS,
  /** In-flight units of work: an HTTP request, a CAR plan, an import, a fetch. */
  WORK,
  /** Heap bytes held for something a peer or client sized. */
  MEMORY,
  /** Bytes written to disk on a peer's or client's behalf before it is accepted. */
  DISK;

  /** The name in metrics and logs: lower case. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
