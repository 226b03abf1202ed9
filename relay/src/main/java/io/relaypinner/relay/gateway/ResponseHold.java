package io.relaypinner.relay.gateway;

import io.relaypinner.relay.http.StreamedResponse;
import java.util.Objects;

/**
 * A DAG held for one {@code /ipfs/} response ({@link GatewayFallback#holdDag}), released once:
 * by the streamed body that carries it, when the body ends, fails, its connection closes or it
 * is discarded unopened ({@link StreamedResponse.Body#releasing}); otherwise (an error answer, a
 * body sent from an open file, a failure) as soon as the answer is made ({@link #settle}).
 */
final class ResponseHold {
  private final Runnable release;
  /** Whether a body took the release over; written before the answer's future completes. */
  private volatile boolean carried;

  /** @param release gives the hold back; runs at most once here */
  ResponseHold(final Runnable release) {
    this.release = Objects.requireNonNull(release, "release");
  }

  /** Nothing held (content that is pinned). */
  static ResponseHold none() {
    return new ResponseHold(() -> { });
  }

  /** {@code body}, releasing the hold when it ends or is discarded. */
  StreamedResponse.Body carry(final StreamedResponse.Body body) {
    carried = true;
    return StreamedResponse.Body.releasing(body, release);
  }

  /** Once the answer is made: releases the hold unless a body carries it. */
  void settle() {
    if (!carried) {
      release.run();
    }
  }
}
