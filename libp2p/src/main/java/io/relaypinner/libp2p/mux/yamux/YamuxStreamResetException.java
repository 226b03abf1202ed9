package io.relaypinner.libp2p.mux.yamux;

import io.relaypinner.libp2p.core.Libp2pException;

/** A yamux stream was reset (RST) by either side; its pending writes fail with this. */
public class YamuxStreamResetException extends Libp2pException {
  private static final long serialVersionUID = 1L;

  private final boolean byRemote;

  public YamuxStreamResetException(final String message, final boolean byRemote) {
    super(message);
    this.byRemote = byRemote;
  }

  /** Whether the remote sent the RST (otherwise we reset the stream). */
  public boolean byRemote() {
    return byRemote;
  }
}
