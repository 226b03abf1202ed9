package io.relaypinner.libp2p.mux.yamux;

/**
 * User event fired through a stream channel's pipeline when the remote resets the stream (RST
 * flag), just before the channel closes. Pending and later writes fail with {@link
 * YamuxStreamResetException}.
 */
public final class YamuxStreamResetEvent {
  /** The only instance. */
  public static final YamuxStreamResetEvent INSTANCE = new YamuxStreamResetEvent();

  private YamuxStreamResetEvent() {}

  @Override
  public String toString() {
    return "YamuxStreamResetEvent";
  }
}
