package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RequestBodyTest {
  private final AtomicInteger pauses = new AtomicInteger();
  private final AtomicInteger resumes = new AtomicInteger();
  private final RequestBody.FlowControl flow = new RequestBody.FlowControl() {
    @Override
    public void pause() {
      pauses.incrementAndGet();
    }

    @Override
    public void resume() {
      resumes.incrementAndGet();
    }
  };

  private static ByteBuf bytes(final int n, final int value) {
    final byte[] b = new byte[n];
    java.util.Arrays.fill(b, (byte) value);
    return Unpooled.wrappedBuffer(b);
  }

  @Test
  void read_shouldReturnTheBytesInOrder_thenEndOfStream() throws IOException {
    final RequestBody body = new RequestBody(100, Duration.ofSeconds(1), flow);
    body.offer(bytes(3, 1));
    body.offer(bytes(2, 2));
    body.end();
    assertThat(body.readAllBytes()).containsExactly(1, 1, 1, 2, 2);
    assertThat(body.read()).isEqualTo(-1);
  }

  @Test
  void read_shouldThrowTooLarge_whenTheBodyGoesOverTheLimit_andReleaseWhatWasBuffered() {
    final RequestBody body = new RequestBody(10, Duration.ofSeconds(1), flow);
    final ByteBuf first = bytes(8, 1);
    assertThat(body.offer(first)).isTrue();
    final ByteBuf second = bytes(8, 2);
    assertThat(body.offer(second)).isFalse();
    assertThat(first.refCnt()).isZero();
    assertThat(second.refCnt()).isZero();
    assertThatThrownBy(body::read).isInstanceOf(RequestBody.TooLargeException.class);
  }

  @Test
  void offer_shouldPauseTheConnection_atTheHighWaterMark_andReadingResumesIt() throws IOException {
    final RequestBody body = new RequestBody(10L << 20, Duration.ofSeconds(1), flow);
    final List<ByteBuf> chunks = new ArrayList<>();
    for (int i = 0; i < RequestBody.HIGH_WATER / 8192; i++) {
      final ByteBuf chunk = bytes(8192, i);
      chunks.add(chunk);
      body.offer(chunk);
    }
    assertThat(pauses.get()).isEqualTo(1);
    body.readNBytes(RequestBody.HIGH_WATER - RequestBody.LOW_WATER);
    assertThat(resumes.get()).isEqualTo(1);
    body.abandon();
    assertThat(chunks).allMatch(c -> c.refCnt() == 0);
    final ByteBuf late = bytes(10, 0);
    assertThat(body.offer(late)).isFalse();
    assertThat(late.refCnt()).isZero();
  }

  @Test
  void read_shouldFail_whenNothingArrivesInTime_orTheConnectionCloses() {
    final RequestBody stalled = new RequestBody(10, Duration.ofMillis(50), flow);
    assertThatThrownBy(stalled::read).isInstanceOf(IOException.class).hasMessageContaining("no request body");
    final RequestBody cut = new RequestBody(10, Duration.ofSeconds(5), flow);
    cut.offer(bytes(2, 7));
    cut.fail(new IOException("closed"));
    assertThatThrownBy(cut::readAllBytes).isInstanceOf(IOException.class);
  }
}
