package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.ipfs.bitswap.FetchRefusedException;
import io.relaypinner.ipfs.blockstore.StorageFullException;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.pin.DagLimitExceededException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class ErrorMappingTest {
  private static final ErrorMapping.ContentRoute PLAIN = new ErrorMapping.ContentRoute(
      Duration.ofSeconds(60), HttpResponseStatus.NOT_FOUND, ErrorCodes.CONTENT_NOT_FOUND,
      "content cannot be fetched: ");
  private static final ErrorMapping.ContentRoute CAR = new ErrorMapping.ContentRoute(
      Duration.ofSeconds(60), HttpResponseStatus.BAD_REQUEST, "car_too_large",
      "content cannot be served: ");

  private static ErrorMapping.Answer content(final Throwable failure,
      final ErrorMapping.ContentRoute route) {
    return ErrorMapping.content(failure, route).orElseThrow();
  }

  @Test
  void unwrap_shouldTakeOffTheFuturesWrappers_only() {
    final IOException cause = new IOException("gone");
    assertThat(ErrorMapping.unwrap(new CompletionException(new ExecutionException(cause))))
        .isSameAs(cause);
    final UncheckedIOException unchecked = new UncheckedIOException(cause);
    assertThat(ErrorMapping.unwrap(unchecked)).isSameAs(unchecked);
  }

  @Test
  void unhandled_shouldAnswer507_503_or500() {
    assertThat(ErrorMapping.unhandled(new CompletionException(
        new StorageFullException("quota of 10 bytes reached"))))
        .isEqualTo(new ErrorMapping.Answer(HttpResponseStatus.INSUFFICIENT_STORAGE,
            ErrorCodes.STORAGE_FULL, "quota of 10 bytes reached"));
    assertThat(ErrorMapping.unhandled(new IllegalStateException("wrapped",
        new StoreUnavailableException("s3", "connection refused", null))))
        .isEqualTo(new ErrorMapping.Answer(HttpResponseStatus.SERVICE_UNAVAILABLE,
            ErrorCodes.STORE_UNAVAILABLE, "s3 store unavailable"));
    final ErrorMapping.Answer bug = ErrorMapping.unhandled(new NullPointerException("oops"));
    assertThat(bug).isEqualTo(new ErrorMapping.Answer(HttpResponseStatus.INTERNAL_SERVER_ERROR,
        ErrorCodes.INTERNAL_ERROR, "internal error"));
    assertThat(bug.isInternal()).isTrue();
  }

  @Test
  void unhandled_shouldAnswer500_toAnOutOfMemoryError_neverSayingWhatFailed() {
    final ErrorMapping.Answer answer = ErrorMapping.unhandled(
        new CompletionException(new OutOfMemoryError("Java heap space")));

    assertThat(answer.status()).isEqualTo(HttpResponseStatus.INTERNAL_SERVER_ERROR);
    assertThat(answer.code()).isEqualTo(ErrorCodes.INTERNAL_ERROR);
    assertThat(answer.isInternal()).isTrue();
    assertThat(answer.message()).doesNotContain("heap");
  }

  @Test
  void content_shouldAnswerEachFailure_withItsStatusAndCode() {
    assertThat(content(new CompletionException(new TimeoutException()), PLAIN)).isEqualTo(
        new ErrorMapping.Answer(HttpResponseStatus.GATEWAY_TIMEOUT, ErrorCodes.GATEWAY_TIMEOUT,
            "content not found on connected peers within 60000 ms"));
    assertThat(content(new RejectedExecutionException(), CAR)).isEqualTo(ErrorMapping.busy());
    assertThat(ErrorMapping.busy().status()).isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
    assertThat(ErrorMapping.busy().code()).isEqualTo(ErrorCodes.IPFS_UNAVAILABLE);
    assertThat(content(new StorageFullException("full"), PLAIN)).isEqualTo(
        new ErrorMapping.Answer(HttpResponseStatus.INSUFFICIENT_STORAGE, ErrorCodes.STORAGE_FULL,
            "this relay's storage is full: full"));
    assertThat(content(new IOException("no peer has it"), PLAIN)).isEqualTo(
        new ErrorMapping.Answer(HttpResponseStatus.NOT_FOUND, ErrorCodes.CONTENT_NOT_FOUND,
            "content cannot be fetched: no peer has it"));
    assertThat(content(new IOException("no peer has it"), CAR).message())
        .isEqualTo("content cannot be served: no peer has it");
    // The node-wide total of fallback bytes in flight had no room: the node's state, retry.
    assertThat(content(new CompletionException(new FetchRefusedException("full")), CAR))
        .isEqualTo(new ErrorMapping.Answer(HttpResponseStatus.SERVICE_UNAVAILABLE,
            ErrorCodes.FALLBACK_BUSY, "the network fallback is busy, retry later: full"));
  }

  @Test
  void content_shouldAnswerADagOverTheLimits_asTheRouteSays() {
    final DagLimitExceededException tooLarge = new DagLimitExceededException("over 10 blocks");

    assertThat(content(tooLarge, PLAIN)).isEqualTo(new ErrorMapping.Answer(
        HttpResponseStatus.NOT_FOUND, ErrorCodes.CONTENT_NOT_FOUND,
        "content too large to fetch: over 10 blocks"));
    assertThat(content(new CompletionException(tooLarge), CAR)).isEqualTo(
        new ErrorMapping.Answer(HttpResponseStatus.BAD_REQUEST, "car_too_large",
            "content too large to fetch: over 10 blocks"));
  }

  @Test
  void content_shouldPassOn_errorsAndStoreOutages_toTheDispatcher() {
    // An OutOfMemoryError in the CAR planner was answered 404 "content cannot be served: Java
    // heap space" and never logged.
    final OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
    assertThat(ErrorMapping.content(new CompletionException(oom), CAR)).isEmpty();
    assertThat(ErrorMapping.content(new StackOverflowError(), PLAIN)).isEmpty();
    assertThat(ErrorMapping.content(new UncheckedIOException(new IOException(oom)), PLAIN))
        .isEmpty();
    assertThat(ErrorMapping.content(new AssertionError("bug"), PLAIN)).isEmpty();
    final StoreUnavailableException outage =
        new StoreUnavailableException("s3", "connection refused", null);
    assertThat(ErrorMapping.content(new CompletionException(outage), CAR)).isEmpty();

    final CompletionException passed = ErrorMapping.passOn(new CompletionException(oom));
    assertThat(passed.getCause()).isSameAs(oom);
    assertThat(ErrorMapping.unhandled(passed).isInternal()).isTrue();
    assertThat(ErrorMapping.unhandled(ErrorMapping.passOn(outage)).status())
        .isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
    assertThat(ErrorMapping.content(new IllegalStateException("x"), PLAIN))
        .isEqualTo(Optional.of(new ErrorMapping.Answer(HttpResponseStatus.NOT_FOUND,
            ErrorCodes.CONTENT_NOT_FOUND, "content cannot be fetched: x")));
  }
}
