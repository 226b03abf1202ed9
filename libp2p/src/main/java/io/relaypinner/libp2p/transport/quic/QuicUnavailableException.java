package io.relaypinner.libp2p.transport.quic;

/**
 * QUIC cannot run here: {@code netty-codec-native-quic}'s library did not load (another OS or
 * CPU than its {@code linux-x86_64} file, a missing or broken {@code .so}). Not a bug of ours nor
 * a remote's fault: the host goes on with its other transports.
 */
public final class QuicUnavailableException extends Exception {
  private static final long serialVersionUID = 1L;

  public QuicUnavailableException(final Throwable cause) {
    super("QUIC is not available on this machine (netty-codec-native-quic did not load: "
        + cause + ")", cause);
  }
}
