package io.relaypinner.relay.http;

import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.common.Failures;
import io.relaypinner.ipfs.bitswap.FetchRefusedException;
import io.relaypinner.ipfs.blockstore.StorageFullException;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.pin.DagLimitExceededException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * The one mapping from a failure to its HTTP error answer (CONTRACT.md "HTTP details"). Two
 * places ask: the {@link HttpDispatcher} for whatever a route did not answer itself
 * ({@link #unhandled}), and the content routes ({@code /ipfs/}, plain and trustless) for what
 * reading or fetching content failed with ({@link #content}).
 *
 * <p>Blame decides: a store outage or a full quota is the relay's state, not the request's (503,
 * 507, retry later); anything the code did not expect is our bug (500 {@code internal_error},
 * logged at ERROR with its stack trace). An {@link Error} (an {@link OutOfMemoryError}, a
 * {@link StackOverflowError}) is never the content's fault: it is never answered as a 404, it goes
 * to the dispatcher and is answered 500 and logged like any bug.
 */
public final class ErrorMapping {
  private ErrorMapping() {}

  /**
   * An error answer before it is built: its status, its {@code code} ({@link ErrorCodes}) and its
   * message.
   */
  public record Answer(HttpResponseStatus status, String code, String message) {
    public Answer {
      Objects.requireNonNull(status, "status");
      Objects.requireNonNull(code, "code");
      Objects.requireNonNull(message, "message");
    }

    /** Whether this is the answer to a bug: the caller logs the failure at ERROR. */
    public boolean isInternal() {
      return status.code() == HttpResponseStatus.INTERNAL_SERVER_ERROR.code();
    }
  }

  /**
   * How one content route words the failures whose answers differ between routes.
   *
   * @param fallbackTimeout the network fallback's limit, named in the 504 answer
   * @param tooLarge status and code when the content is over the fallback's limits (the plain
   *     gateway: 404 {@code content_not_found}; the trustless one: 400 {@code car_too_large})
   * @param notFound what the 404 message of any other failure starts with
   */
  public record ContentRoute(Duration fallbackTimeout, HttpResponseStatus tooLarge,
      String tooLargeCode, String notFound) {
    public ContentRoute {
      Objects.requireNonNull(fallbackTimeout, "fallbackTimeout");
      Objects.requireNonNull(tooLarge, "tooLarge");
      Objects.requireNonNull(tooLargeCode, "tooLargeCode");
      Objects.requireNonNull(notFound, "notFound");
    }
  }

  /**
   * The failure under the wrappers futures add ({@link CompletionException},
   * {@link ExecutionException}).
   */
  public static Throwable unwrap(final Throwable error) {
    return Failures.unwrap(error);
  }

  /**
   * The answer to a failure no route answered itself: 507 {@code storage_full} when the storage
   * quota refused new content, 503 {@code store_unavailable} when a shared store is down, else
   * 500 {@code internal_error} ({@link Answer#isInternal()}: details go to the log, not to the
   * client).
   */
  public static Answer unhandled(final Throwable failure) {
    final StorageFullException full = StorageFullException.find(failure);
    if (full != null) {
      return new Answer(HttpResponseStatus.INSUFFICIENT_STORAGE, ErrorCodes.STORAGE_FULL,
          full.getMessage());
    }
    final StoreUnavailableException outage = StoreUnavailableException.find(failure);
    if (outage != null) {
      return new Answer(HttpResponseStatus.SERVICE_UNAVAILABLE, ErrorCodes.STORE_UNAVAILABLE,
          outage.store() + " store unavailable");
    }
    return new Answer(HttpResponseStatus.INTERNAL_SERVER_ERROR, ErrorCodes.INTERNAL_ERROR,
        "internal error");
  }

  /**
   * The answer of a content route to a failure while it fetched, read or planned content; empty
   * for the failures that are not the content's: the route passes those on ({@link #passOn}) and
   * the dispatcher answers them with {@link #unhandled}. In order:
   *
   * <ul>
   *   <li>an {@link Error} (or a {@link VirtualMachineError} anywhere among the causes): passed on
   *       (500, logged at ERROR);
   *   <li>the network fallback's time ran out: 504 {@code gateway_timeout};
   *   <li>the node-wide total of fallback bytes in flight had no room: 503
   *       {@code fallback_busy};
   *   <li>an executor refused the work: 503 {@code ipfs_unavailable} ("busy, retry later");
   *   <li>the DAG is over the fallback's limits: {@link ContentRoute#tooLarge};
   *   <li>the storage quota is reached: 507 {@code storage_full};
   *   <li>a shared store is down: passed on (503 {@code store_unavailable}: what is missing may
   *       be there once the store is back);
   *   <li>anything else (a missing or malformed block, a peer that failed): 404
   *       {@code content_not_found}.
   * </ul>
   */
  public static Optional<Answer> content(final Throwable failure, final ContentRoute route) {
    final Throwable cause = unwrap(failure);
    if (isFatal(cause)) {
      return Optional.empty();
    }
    if (cause instanceof TimeoutException) {
      return Optional.of(new Answer(HttpResponseStatus.GATEWAY_TIMEOUT,
          ErrorCodes.GATEWAY_TIMEOUT, "content not found on connected peers within "
              + route.fallbackTimeout().toMillis() + " ms"));
    }
    if (cause instanceof FetchRefusedException) {
      return Optional.of(new Answer(HttpResponseStatus.SERVICE_UNAVAILABLE,
          ErrorCodes.FALLBACK_BUSY, "the network fallback is busy, retry later: "
              + cause.getMessage()));
    }
    if (cause instanceof RejectedExecutionException) {
      return Optional.of(busy());
    }
    if (cause instanceof DagLimitExceededException) {
      return Optional.of(new Answer(route.tooLarge(), route.tooLargeCode(),
          "content too large to fetch: " + cause.getMessage()));
    }
    if (StorageFullException.find(cause) != null) {
      return Optional.of(new Answer(HttpResponseStatus.INSUFFICIENT_STORAGE,
          ErrorCodes.STORAGE_FULL, "this relay's storage is full: " + cause.getMessage()));
    }
    if (StoreUnavailableException.find(cause) != null) {
      return Optional.empty();
    }
    return Optional.of(new Answer(HttpResponseStatus.NOT_FOUND, ErrorCodes.CONTENT_NOT_FOUND,
        route.notFound() + cause.getMessage()));
  }

  /**
   * Whether {@code failure} is our bug or the JVM's and never a request's answer: an
   * {@link Error}, or a {@link VirtualMachineError} wherever it is among the causes.
   */
  static boolean isFatal(final Throwable failure) {
    return Failures.isFatal(failure);
  }

  /** 503 {@code ipfs_unavailable}: the content store's executor is full. */
  public static Answer busy() {
    return new Answer(HttpResponseStatus.SERVICE_UNAVAILABLE, ErrorCodes.IPFS_UNAVAILABLE,
        "content store busy, retry later");
  }

  /**
   * What a content route throws (in {@code exceptionally}) to pass on a failure
   * {@link #content} did not answer: the dispatcher then answers it ({@link #unhandled}).
   */
  public static CompletionException passOn(final Throwable failure) {
    return new CompletionException(unwrap(failure));
  }
}
