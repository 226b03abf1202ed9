package io.relaypinner.relay.export;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.car.CarBlock;
import io.relaypinner.ipfs.car.CarFormatException;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.Multihash;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A CAR v1 staged on disk ({@link ImportStaging}), read as a read-only {@link Blockstore}: its
 * blocks stay in the file and are read one at a time when asked for. Opening reads the file
 * twice: once through {@link CarReader} (every section checked: size, CID, hash, the CAR's
 * limits), once to note where each block starts. The only thing held in memory is that index,
 * one {@code long} (8 bytes) per block, sorted: the high bits a keyed hash of the block's
 * multihash (the key is random per CAR, so a sender cannot make its blocks collide), the low bits
 * the section's offset. A lookup finds the entries with the hash's bits by binary search and
 * reads each one's CID from the file to compare the whole multihash. Thread-safe (positional
 * reads).
 */
final class StagedCar implements Blockstore, AutoCloseable {
  /** A section's CID is at most this long (as {@link CarReader} allows). */
  private static final int MAX_CID_BYTES = 2 + 9 + 9 + 128;

  private final FileChannel channel;
  private final List<Cid> roots;
  private final long[] index;
  private final int offsetBits;
  private final long seed;
  private final long heldBytes;

  private StagedCar(final FileChannel channel, final List<Cid> roots, final long[] index,
      final int offsetBits, final long seed, final long heldBytes) {
    this.channel = channel;
    this.roots = roots;
    this.index = index;
    this.offsetBits = offsetBits;
    this.seed = seed;
    this.heldBytes = heldBytes;
  }

  /**
   * Checks and indexes the CAR in {@code file}.
   *
   * @param seed the key of the index's hash (random per import)
   * @throws CarFormatException when it is not a CAR within {@code limits} whose every block
   *     matches its CID
   */
  static StagedCar open(final Path file, final CarReader.Limits limits, final long seed)
      throws IOException {
    final long size = Files.size(file);
    final List<Cid> roots;
    final long headerEnd;
    int count = 0;
    long largest = 0;
    try (CountingInput in = new CountingInput(
        new BufferedInputStream(Files.newInputStream(file), 64 * 1024))) {
      final CarReader reader = new CarReader(in, limits);
      roots = reader.roots();
      headerEnd = in.count;
      long start = in.count;
      for (Optional<CarBlock> next = reader.next(); next.isPresent(); next = reader.next()) {
        largest = Math.max(largest, in.count - start);
        start = in.count;
        if (!Blocks.isIdentity(next.get().cid())) {
          count++;
        }
      }
    }
    final int offsetBits = Math.max(1, 64 - Long.numberOfLeadingZeros(size));
    final long[] index = new long[count];
    final FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
    try {
      int filled = 0;
      try (CountingInput in = new CountingInput(
          new BufferedInputStream(Files.newInputStream(file), 64 * 1024))) {
        in.skipNBytes(headerEnd);
        while (filled < count) {
          final long offset = in.count;
          final long length = readVarint(in);
          final int head = (int) Math.min(length, MAX_CID_BYTES);
          final byte[] cidBytes = in.readNBytes(head);
          final Cid cid = Cid.read(cidBytes, 0, cidBytes.length).cid();
          in.skipNBytes(length - head);
          if (!Blocks.isIdentity(cid)) {
            index[filled++] = pack(key(cid.multihash(), seed), offset, offsetBits);
          }
        }
      }
      Arrays.sort(index);
      // The index, plus the largest section as the reader held it (its bytes and the block's).
      return new StagedCar(channel, roots, index, offsetBits, seed,
          8L * index.length + 2 * largest);
    } catch (final IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  /** The CAR header's roots. */
  List<Cid> roots() {
    return roots;
  }

  /** Blocks in the CAR (identity CIDs aside). */
  int blocks() {
    return index.length;
  }

  /**
   * The most memory this CAR held for its blocks at once: the index and the largest section
   * while it was checked (a lookup then holds one block).
   */
  long heldBytes() {
    return heldBytes;
  }

  /** The block with {@code multihash}, under the CID the CAR gave it. */
  Optional<CarBlock> block(final Multihash multihash) {
    final long prefix = pack(key(multihash, seed), 0, offsetBits);
    final long last = prefix | ((1L << offsetBits) - 1);
    int i = firstAtLeast(prefix);
    for (; i < index.length && index[i] <= last; i++) {
      final long offset = index[i] & ((1L << offsetBits) - 1);
      try {
        final Optional<CarBlock> block = readIf(offset, multihash);
        if (block.isPresent()) {
          return block;
        }
      } catch (final IOException e) {
        throw new UncheckedIOException("cannot read the staged CAR", e);
      }
    }
    return Optional.empty();
  }

  private int firstAtLeast(final long value) {
    int low = 0;
    int high = index.length;
    while (low < high) {
      final int mid = (low + high) >>> 1;
      if (index[mid] < value) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    return low;
  }

  /** The block at {@code offset} if its multihash is {@code wanted} (else only its CID read). */
  private Optional<CarBlock> readIf(final long offset, final Multihash wanted)
      throws IOException {
    final ByteBuffer prefix = ByteBuffer.allocate(10 + MAX_CID_BYTES);
    readAt(prefix, offset, true);
    prefix.flip();
    long length = 0;
    int varint = 0;
    for (int shift = 0; ; shift += 7) {
      final int b = prefix.get() & 0xff;
      varint++;
      length |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        break;
      }
    }
    final Cid.Decoded decoded;
    try {
      decoded = Cid.read(prefix.array(), varint,
          (int) Math.min(prefix.limit(), varint + length));
    } catch (final MultiformatException e) {
      throw new IOException("the staged CAR changed on disk", e);
    }
    if (!decoded.cid().multihash().equals(wanted)) {
      return Optional.empty();
    }
    final ByteBuffer data = ByteBuffer.allocate((int) (length - decoded.length()));
    readAt(data, offset + varint + decoded.length(), false);
    return Optional.of(new CarBlock(decoded.cid(), data.array()));
  }

  /** Fills {@code into} from {@code offset}; a prefix may stop short at the end of the file. */
  private void readAt(final ByteBuffer into, final long offset, final boolean prefix)
      throws IOException {
    long position = offset;
    while (into.hasRemaining()) {
      final int n = channel.read(into, position);
      if (n < 0) {
        if (prefix && into.position() > 0) {
          return;
        }
        throw new EOFException("the staged CAR ends early");
      }
      position += n;
    }
  }

  @Override
  public boolean has(final Cid cid) {
    return Blocks.isIdentity(cid) || block(cid.multihash()).isPresent();
  }

  @Override
  public Optional<byte[]> get(final Cid cid) {
    if (Blocks.isIdentity(cid)) {
      return Optional.of(cid.multihash().digest());
    }
    return block(cid.multihash()).map(CarBlock::data);
  }

  @Override
  public Optional<Integer> size(final Cid cid) {
    return get(cid).map(data -> data.length);
  }

  @Override
  public void put(final Cid cid, final byte[] data) {
    throw new UnsupportedOperationException("a staged CAR is read-only");
  }

  @Override
  public boolean delete(final Cid cid) {
    throw new UnsupportedOperationException("a staged CAR is read-only");
  }

  @Override
  public void forEachKey(final Consumer<Cid> visitor) {
    for (final long entry : index) {
      final long offset = entry & ((1L << offsetBits) - 1);
      final ByteBuffer prefix = ByteBuffer.allocate(10 + MAX_CID_BYTES);
      try {
        readAt(prefix, offset, true);
      } catch (final IOException e) {
        throw new UncheckedIOException("cannot read the staged CAR", e);
      }
      prefix.flip();
      int varint = 0;
      while ((prefix.get() & 0x80) != 0) {
        varint++;
      }
      varint++;
      visitor.accept(Cid.read(prefix.array(), varint, prefix.limit()).cid());
    }
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }

  private static long pack(final long key, final long offset, final int offsetBits) {
    return (key >>> offsetBits << offsetBits) | offset;
  }

  /** A keyed 64-bit hash of the multihash's bytes (murmur-style mixing). */
  static long key(final Multihash multihash, final long seed) {
    final byte[] bytes = multihash.bytes();
    long h = seed ^ (bytes.length * 0x9E3779B97F4A7C15L);
    for (int i = 0; i < bytes.length; i += 8) {
      long chunk = 0;
      for (int j = i; j < Math.min(i + 8, bytes.length); j++) {
        chunk = (chunk << 8) | (bytes[j] & 0xff);
      }
      h = Long.rotateLeft(h ^ mix(chunk), 31) * 0x9E3779B97F4A7C15L;
    }
    return mix(h);
  }

  private static long mix(final long value) {
    long k = value;
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  private static long readVarint(final InputStream in) throws IOException {
    long value = 0;
    for (int shift = 0; shift < 63; shift += 7) {
      final int b = in.read();
      if (b < 0) {
        throw new EOFException("the staged CAR ends inside a length");
      }
      value |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
    }
    throw new IOException("varint too long in the staged CAR");
  }

  /** Counts the bytes read through it. */
  private static final class CountingInput extends FilterInputStream {
    long count;

    CountingInput(final InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      final int b = super.read();
      if (b >= 0) {
        count++;
      }
      return b;
    }

    @Override
    public int read(final byte[] into, final int offset, final int length) throws IOException {
      final int n = super.read(into, offset, length);
      if (n > 0) {
        count += n;
      }
      return n;
    }

    @Override
    public long skip(final long n) throws IOException {
      final long skipped = super.skip(n);
      count += skipped;
      return skipped;
    }
  }
}
