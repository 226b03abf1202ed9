package io.relaypinner.relay.http;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.stream.ChunkedInput;

/** A {@link ChunkedInput} that runs {@code onClose} once it is closed ({@link StreamedResponse.Body#releasing}). */
final class ReleasingInput<T> implements ChunkedInput<T> {
  private final ChunkedInput<T> input;
  private final Runnable onClose;

  ReleasingInput(final ChunkedInput<T> input, final Runnable onClose) {
    this.input = input;
    this.onClose = onClose;
  }

  @Override
  public boolean isEndOfInput() throws Exception {
    return input.isEndOfInput();
  }

  @Override
  public void close() throws Exception {
    try {
      input.close();
    } finally {
      onClose.run();
    }
  }

  @Deprecated
  @Override
  public T readChunk(final ChannelHandlerContext ctx) throws Exception {
    return input.readChunk(ctx);
  }

  @Override
  public T readChunk(final ByteBufAllocator allocator) throws Exception {
    return input.readChunk(allocator);
  }

  @Override
  public long length() {
    return input.length();
  }

  @Override
  public long progress() {
    return input.progress();
  }
}
