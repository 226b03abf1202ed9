package io.relaypinner.orbitdb.heads;

/**
 * How one heads-exchange stream ended.
 *
 * @param received entry blocks the peer sent
 * @param sent entry blocks we sent
 * @param failure null when the exchange completed, else why the stream was closed
 */
public record HeadsExchangeResult(int received, int sent, String failure) {
  /** Whether both sides finished normally. */
  public boolean completed() {
    return failure == null;
  }
}
