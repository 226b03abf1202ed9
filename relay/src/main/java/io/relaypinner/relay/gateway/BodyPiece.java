package io.relaypinner.relay.gateway;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * One piece of a streamed {@code /ipfs/} body, prepared on the storage executor and handed to the
 * connection by {@link SliceInput}: bytes already in memory, or a span of an open block file that
 * the connection sends with {@code sendfile} (no copy through the JVM heap). No Netty here.
 */
public sealed interface BodyPiece {
  /** Bytes in this piece. */
  long length();

  /** Gives up what the piece holds (an open file) when it will not be sent. */
  void discard();

  /**
   * Buffers sent back to back as one write (wrapped, never copied).
   *
   * @param buffers read-only views; not modified
   */
  record Bytes(List<ByteBuffer> buffers) implements BodyPiece {
    public Bytes {
      buffers = List.copyOf(buffers);
    }

    @Override
    public long length() {
      long total = 0;
      for (final ByteBuffer buffer : buffers) {
        total += buffer.remaining();
      }
      return total;
    }

    @Override
    public void discard() {
      // Heap memory only.
    }
  }

  /**
   * The {@code head} buffers, then {@code count} bytes of {@code file} from {@code position};
   * whoever takes the piece closes the file (the connection, once the span is written, or
   * {@link #discard}).
   */
  record FileSpan(List<ByteBuffer> head, FileChannel file, long position, long count)
      implements BodyPiece {
    public FileSpan {
      head = List.copyOf(head);
      Objects.requireNonNull(file, "file");
      if (position < 0 || count < 0) {
        throw new IllegalArgumentException("negative position or count");
      }
    }

    @Override
    public long length() {
      return new Bytes(head).length() + count;
    }

    @Override
    public void discard() {
      closeQuietly(file);
    }

    /** Closes a read-only channel; closing one cannot lose data, so a failure is ignored. */
    static void closeQuietly(final FileChannel file) {
      try {
        file.close();
      } catch (final IOException e) {
        // Nothing was written through it.
      }
    }
  }

  /** Each buffer of {@code slices} as a piece of its own. */
  static Iterator<BodyPiece> of(final Iterator<ByteBuffer> slices) {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return slices.hasNext();
      }

      @Override
      public BodyPiece next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return new Bytes(List.of(slices.next()));
      }
    };
  }
}
