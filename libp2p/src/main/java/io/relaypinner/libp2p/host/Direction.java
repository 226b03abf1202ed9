package io.relaypinner.libp2p.host;

/** Who opened a connection. */
public enum Direction {
  /** The remote dialled us. */
  INBOUND,
  /** We dialled the remote. */
  OUTBOUND
}
