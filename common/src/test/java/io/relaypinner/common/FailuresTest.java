package io.relaypinner.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class FailuresTest {
  @Test
  void unwrap_shouldStripFutureWrappersOnly_keepingTheThrownExceptionsOwnCauses() {
    final IOException thrown = new IOException("read failed", new ConnectException("refused"));
    assertThat(Failures.unwrap(new CompletionException(thrown))).isSameAs(thrown);
    assertThat(Failures.unwrap(new ExecutionException(thrown))).isSameAs(thrown);
    assertThat(Failures.unwrap(
        new CompletionException(new ExecutionException(new CompletionException(thrown)))))
        .isSameAs(thrown);
    assertThat(Failures.unwrap(thrown)).isSameAs(thrown);
    assertThat(Failures.unwrap(null)).isNull();
  }

  @Test
  void unwrap_shouldKeepAWrapperWithoutCause() {
    final CompletionException empty = new CompletionException("no cause", null);
    assertThat(Failures.unwrap(empty)).isSameAs(empty);
    final CompletionException outer = new CompletionException(empty);
    assertThat(Failures.unwrap(outer)).isSameAs(empty);
  }

  @Test
  void unwrap_shouldFindWhatAFutureFailedWith() {
    final IllegalStateException thrown = new IllegalStateException("boom");
    final CompletableFuture<Object> failed = CompletableFuture.failedFuture(thrown)
        .thenApply(x -> x).thenCompose(CompletableFuture::completedFuture);
    final Throwable seen = failed.handle((ok, error) -> error).join();
    assertThat(seen).isInstanceOf(CompletionException.class);
    assertThat(Failures.unwrap(seen)).isSameAs(thrown);
    assertThatThrownBy(failed::get).isInstanceOfSatisfying(ExecutionException.class,
        e -> assertThat(Failures.unwrap(e)).isSameAs(thrown));
  }

  @Test
  void rootCause_shouldGoToTheDeepestCause() {
    final ConnectException bottom = new ConnectException("refused");
    final Exception top = new RuntimeException("sdk", new IOException("client", bottom));
    assertThat(Failures.rootCause(top)).isSameAs(bottom);
    assertThat(Failures.rootCause(bottom)).isSameAs(bottom);
    assertThat(Failures.rootCause(null)).isNull();
  }

  @Test
  void rootCause_andFind_shouldStop_whenTheChainLoops() {
    final Exception a = new Exception("a");
    final Exception b = new Exception("b", a);
    a.initCause(b);
    assertThat(Failures.rootCause(a)).isIn(a, b);
    assertThat(Failures.find(a, IOException.class)).isNull();
    assertThat(Failures.find(a, Exception.class)).isSameAs(a);
  }

  @Test
  void find_shouldReturnTheFirstOfItsTypeInTheChain() {
    final IOException inner = new IOException("inner");
    final IOException outer = new IOException("outer", new RuntimeException(inner));
    final CompletionException wrapped = new CompletionException(outer);
    assertThat(Failures.find(wrapped, IOException.class)).isSameAs(outer);
    assertThat(Failures.find(inner, IOException.class)).isSameAs(inner);
    assertThat(Failures.find(wrapped, ConnectException.class)).isNull();
    assertThat(Failures.find(null, IOException.class)).isNull();
  }

  @Test
  void messages_shouldFallBackToTheSimpleClassName() {
    assertThat(Failures.messageOf(new IOException("disk full"))).isEqualTo("disk full");
    assertThat(Failures.messageOf(new IOException())).isEqualTo("IOException");
    assertThat(Failures.rootMessage(new RuntimeException("top", new ConnectException("refused"))))
        .isEqualTo("refused");
    assertThat(Failures.rootMessage(new RuntimeException("top", new ConnectException())))
        .isEqualTo("ConnectException");
    assertThat(Failures.rootMessage(new IllegalStateException("alone"))).isEqualTo("alone");
  }

  @Test
  void isFatal_shouldSeeErrors_andVirtualMachineErrorsAnywhereInTheChain() {
    final OutOfMemoryError oom = new OutOfMemoryError("Direct buffer memory");
    assertThat(Failures.isFatal(new CompletionException(oom))).isTrue();
    assertThat(Failures.isFatal(new AssertionError("bug"))).isTrue();
    assertThat(Failures.isFatal(new IOException("wrapped", new StackOverflowError()))).isTrue();
    assertThat(Failures.isFatal(new IOException("reset"))).isFalse();
    assertThat(Failures.isFatal(null)).isFalse();
  }

  @Test
  void rethrowIfFatal_shouldThrowTheError_andReturnForAnException() {
    final OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
    assertThatThrownBy(() -> Failures.rethrowIfFatal(new CompletionException(oom))).isSameAs(oom);
    final StackOverflowError deep = new StackOverflowError();
    assertThatThrownBy(() -> Failures.rethrowIfFatal(new IllegalStateException("x", deep)))
        .isSameAs(deep);
    Failures.rethrowIfFatal(new CompletionException(new IOException("reset")));
  }
}
