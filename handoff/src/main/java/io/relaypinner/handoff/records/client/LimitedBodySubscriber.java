package io.relaypinner.handoff.records.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * Collects a response body up to a limit; a larger body cancels the download and fails with an
 * {@link IOException}, so a misbehaving server cannot make the client buffer without bound.
 */
final class LimitedBodySubscriber implements HttpResponse.BodySubscriber<byte[]> {
  private final int limit;
  private final CompletableFuture<byte[]> result = new CompletableFuture<>();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private Flow.Subscription subscription;

  LimitedBodySubscriber(final int limit) {
    this.limit = limit;
  }

  @Override
  public CompletionStage<byte[]> getBody() {
    return result;
  }

  @Override
  public void onSubscribe(final Flow.Subscription subscription) {
    this.subscription = subscription;
    subscription.request(Long.MAX_VALUE);
  }

  @Override
  public void onNext(final List<ByteBuffer> buffers) {
    if (result.isDone()) {
      return;
    }
    for (final ByteBuffer buffer : buffers) {
      if (out.size() + buffer.remaining() > limit) {
        subscription.cancel();
        result.completeExceptionally(
            new IOException("response body over the limit of " + limit + " bytes"));
        return;
      }
      final byte[] chunk = new byte[buffer.remaining()];
      buffer.get(chunk);
      out.write(chunk, 0, chunk.length);
    }
  }

  @Override
  public void onError(final Throwable error) {
    result.completeExceptionally(error);
  }

  @Override
  public void onComplete() {
    result.complete(out.toByteArray());
  }
}
