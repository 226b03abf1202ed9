package io.relaypinner.relay.http;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.stream.ChunkedInput;

/**
 * The body of a streamed response with a known {@code Content-Length}: the chunks of
 * {@code input} as they are ({@code ByteBuf}s and {@code FileRegion}s, which the HTTP encoder
 * passes through), then {@link LastHttpContent} so the encoder is ready for the next response.
 * Unlike Netty's {@code HttpChunkedInput} it does not wrap chunks in {@code HttpContent}, which
 * cannot carry a file region.
 */
final class ContentInput implements ChunkedInput<Object> {
  private final ChunkedInput<?> input;
  private boolean sentLast;

  ContentInput(final ChunkedInput<?> input) {
    this.input = input;
  }

  @Override
  public boolean isEndOfInput() throws Exception {
    return input.isEndOfInput() && sentLast;
  }

  @Override
  public void close() throws Exception {
    input.close();
  }

  @Deprecated
  @Override
  public Object readChunk(final ChannelHandlerContext ctx) throws Exception {
    return readChunk(ctx.alloc());
  }

  @Override
  public Object readChunk(final ByteBufAllocator allocator) throws Exception {
    if (input.isEndOfInput()) {
      if (sentLast) {
        return null;
      }
      sentLast = true;
      return LastHttpContent.EMPTY_LAST_CONTENT;
    }
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
