package io.relaypinner.relay.http;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.stream.ChunkedInput;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.Objects;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A response whose body is streamed instead of held in memory (spec 4.6, {@code /ipfs/}): the
 * status and headers of a {@link io.netty.handler.codec.http.FullHttpResponse} with an empty
 * content, plus a body of {@code contentLength} bytes that the dispatcher writes through a
 * {@link io.netty.handler.stream.ChunkedWriteHandler} once it is this response's turn.
 *
 * <p>Or the body is a span of an open file ({@link #ofFile}), written as a
 * {@link io.netty.channel.DefaultFileRegion} ({@code sendfile}, no copy through the JVM) on plain
 * connections and read in chunks when the pipeline has TLS.
 *
 * <p>A chunked body is opened lazily, on the event loop, and only for {@code GET}: {@code HEAD} and
 * answers to closed connections never open it, so a body factory must not hold resources before
 * it is called. The opened input yields {@link io.netty.buffer.ByteBuf}s, and may yield
 * {@link io.netty.channel.FileRegion}s when told the connection can send them (no TLS). It may
 * return {@code null} from {@code readChunk} while its data is being read off the loop; it then
 * calls the {@code resume} callback (from any thread) once more data is ready. An input that
 * throws after the headers were sent makes the connection close.
 */
public final class StreamedResponse extends DefaultFullHttpResponse {
  private static final Logger LOG = LoggerFactory.getLogger(StreamedResponse.class);
  /**
   * A body that is a span of an open file, sent with {@code sendfile} (zero-copy) on plain
   * connections.
   *
   * @param file open for reading; closed by the dispatcher once written or discarded
   * @param onSent called with {@code count} once the span has been written to the socket
   */
  public record FileBody(FileChannel file, long position, long count, LongConsumer onSent) {
    public FileBody {
      Objects.requireNonNull(file, "file");
      Objects.requireNonNull(onSent, "onSent");
      if (position < 0 || count < 0) {
        throw new IllegalArgumentException("negative position or count");
      }
    }
  }

  /** Opens a chunked body. */
  @FunctionalInterface
  public interface Body {
    /**
     * @param resume wakes the writer once more data is ready (any thread)
     * @param fileRegions whether the input may yield {@link io.netty.channel.FileRegion}s, sent
     *     with {@code sendfile}; false on TLS connections, where every byte passes the engine
     * @return an input of {@code ByteBuf}s (and file regions when allowed), without the end
     *     marker: the dispatcher ends the HTTP message
     */
    ChunkedInput<?> open(Runnable resume, boolean fileRegions);

    /** Called instead of {@link #open} when the body is never sent ({@code HEAD}, gone). */
    default void discard() {}

    /**
     * {@code body}, with {@code release} run once: when the opened input is closed (the
     * {@link io.netty.handler.stream.ChunkedWriteHandler} closes it at the end, on failure and
     * when the connection closes) or when the body is discarded unopened. For what a response
     * holds until it is sent (a CAR plan's reservation of the node budget).
     */
    static Body releasing(final Body body, final Runnable release) {
      Objects.requireNonNull(body, "body");
      final java.util.concurrent.atomic.AtomicBoolean done =
          new java.util.concurrent.atomic.AtomicBoolean();
      final Runnable once = () -> {
        if (done.compareAndSet(false, true)) {
          release.run();
        }
      };
      return new Body() {
        @Override
        public ChunkedInput<?> open(final Runnable resume, final boolean fileRegions) {
          final ChunkedInput<?> input;
          try {
            input = body.open(resume, fileRegions);
          } catch (final RuntimeException | Error e) {
            once.run();
            throw e;
          }
          return new ReleasingInput<>(input, once);
        }

        @Override
        public void discard() {
          try {
            body.discard();
          } finally {
            once.run();
          }
        }
      };
    }
  }

  private final long contentLength;
  private final Body body;
  private final FileBody fileBody;

  /**
   * @param contentLength the exact number of bytes the body yields ({@code Content-Length})
   * @param body opens the body given the {@code resume} callback
   */
  public StreamedResponse(final HttpResponseStatus status, final long contentLength,
      final Body body) {
    super(HttpVersion.HTTP_1_1, status, Unpooled.EMPTY_BUFFER);
    if (contentLength < 0) {
      throw new IllegalArgumentException("negative content length");
    }
    this.contentLength = contentLength;
    this.body = Objects.requireNonNull(body, "body");
    this.fileBody = null;
  }

  private StreamedResponse(final HttpResponseStatus status, final FileBody fileBody) {
    super(HttpVersion.HTTP_1_1, status, Unpooled.EMPTY_BUFFER);
    this.contentLength = fileBody.count();
    this.body = null;
    this.fileBody = fileBody;
  }

  /**
   * A response whose body is {@code count} bytes of {@code file} from {@code position}. The file
   * is opened by the caller (off the event loop) and closed by the dispatcher in every case.
   */
  public static StreamedResponse ofFile(final HttpResponseStatus status, final FileBody body) {
    return new StreamedResponse(status, Objects.requireNonNull(body, "body"));
  }

  public long contentLength() {
    return contentLength;
  }

  /** The file span to send, or {@code null} when the body is chunked. */
  FileBody fileBody() {
    return fileBody;
  }

  /** Opens the chunked body; called at most once, on the event loop, when there is no file. */
  ChunkedInput<?> openBody(final Runnable resume, final boolean fileRegions) {
    return body.open(resume, fileRegions);
  }

  /** For answers whose body is never sent ({@code HEAD}, a connection already gone). */
  void discardBody() {
    if (body != null) {
      body.discard();
    }
    if (fileBody != null) {
      try {
        fileBody.file().close();
      } catch (final IOException e) {
        // A read-only channel: closing cannot lose data; nothing else to do.
        LOG.debug("closing an unsent file body failed: {}", e.toString());
      }
    }
  }
}
