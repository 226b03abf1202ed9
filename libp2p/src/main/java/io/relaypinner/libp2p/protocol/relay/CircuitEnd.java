package io.relaypinner.libp2p.protocol.relay;

import java.util.Locale;

/** Why a relayed circuit ended; counted by {@link CircuitRelayEngine#circuitsEnded()}. */
public enum CircuitEnd {
  /** Both ends closed their side (FIN both ways) or closed their stream. */
  CLOSED,
  /** One end reset its stream, or its connection went away. */
  RESET,
  /** More than the circuit's data limit in one direction. */
  DATA_LIMIT,
  /** Open longer than the circuit's duration limit. */
  DURATION_LIMIT,
  /** A write to one end failed (its buffer was full or the stream was gone). */
  WRITE_FAILED,
  /** Never carried a byte: the destination refused or did not answer, or it was gone. */
  NOT_ESTABLISHED;

  /** The metrics label, e.g. {@code data_limit}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
