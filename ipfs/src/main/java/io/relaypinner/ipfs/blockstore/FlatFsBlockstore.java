package io.relaypinner.ipfs.blockstore;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.Multihash;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Blockstore} with one file per block, laid out like Kubo's {@code flatfs} datastore with
 * the {@code /repo/flatfs/shard/v1/next-to-last/2} shard function:
 *
 * <pre>
 *   dir/SHARDING                      "/repo/flatfs/shard/v1/next-to-last/2\n"
 *   dir/.lock                         held (FileLock) while a store has the directory open
 *   dir/&lt;SH&gt;/&lt;KEY&gt;.data             the block's exact bytes
 *   dir/&lt;SH&gt;/.tmp-*.part              a write in progress (deleted at open)
 * </pre>
 *
 * <p>{@code KEY} is the binary multihash in RFC 4648 base32, <b>upper case</b>, unpadded and
 * without a multibase prefix (what Kubo's {@code dshelp.MultihashToDsKey} produces), and
 * {@code SH} is the two characters before its last one. Upper case matches Kubo, so a Kubo
 * {@code blocks/} directory can be read as is, and it avoids case-folding surprises.
 *
 * <p>Writes are atomic: the verified bytes go to a temporary file in the shard directory, which is
 * fsynced, then hard-linked to the final name (falling back to an atomic rename where hard links
 * are unsupported) and the shard directory is fsynced. A crash at any point leaves either no file
 * under the final name or the complete block; leftover temporary files are deleted at open. Blocks
 * are immutable, so two concurrent puts of one block are harmless: the second link finds the file
 * present and discards its temporary copy.
 *
 * <p><b>Group commit</b> ({@link #stage}, {@link #sync}). A staged block is written to its
 * temporary file without an fsync and kept in memory, where {@link #has}, {@link #get} and {@link
 * #size} find it; nothing appears under its final name yet. {@link #sync} takes every staged
 * block, fsyncs each temporary file, links each to its final name, then fsyncs each shard
 * directory it touched once (and the root when it created a shard). So the invariant of {@link
 * #put} holds for staged blocks too: a final name only ever names bytes that were fsynced before
 * the name existed, and a crash before the barrier leaves temporary files (deleted at open) that
 * nothing durable references. A barrier of {@code n} blocks in {@code d} shards costs {@code n +
 * d} fsyncs (a {@code put} costs 2); on Linux ext4 and xfs the {@code d} directory fsyncs after
 * the links need one journal commit together, the first one persisting every name operation
 * before it. Callers running the barrier at once share it: one caller runs it while the others
 * wait for it and find their blocks done, or run the next one for what was staged meanwhile. At
 * most {@link #MAX_STAGED_BYTES} (and {@link #MAX_STAGED_BLOCKS}) wait in memory; a stage beyond
 * that runs the barrier itself. {@link #fsyncs} counts every fsync the store issues.
 *
 * <p>Reads refuse files over {@link Blocks#MAX_BLOCK_SIZE}. Verify-on-read is off by default:
 * every put was verified before it became visible under its name and the write is atomic, so
 * re-hashing up to 2 MiB on every read only protects against bit rot or someone editing the
 * directory, at a CPU cost on the serving path (and zero-copy serving via {@link #path} cannot
 * verify anyway). Receivers of served blocks verify them themselves.
 *
 * <p>Thread-safe; calls block on disk I/O. The directory is locked against a second store for as
 * long as this one is open; {@link #close} releases it.
 */
public final class FlatFsBlockstore implements Blockstore, Closeable {
  /** The shard function written to {@code SHARDING}, as Kubo writes it. */
  public static final String SHARDING = "/repo/flatfs/shard/v1/next-to-last/2";
  static final String SHARDING_FILE = "SHARDING";
  static final String LOCK_FILE = ".lock";
  static final String SUFFIX = ".data";
  static final String TEMP_PREFIX = ".tmp-";
  private static final Logger LOG = LoggerFactory.getLogger(FlatFsBlockstore.class);
  private static final Multibase.Base KEY_BASE = Multibase.Base.BASE32_UPPER;
  /** Most bytes of staged blocks held in memory before a stage runs the barrier itself. */
  public static final long MAX_STAGED_BYTES = 16L * 1024 * 1024;
  /** Most staged blocks before a stage runs the barrier itself (open temporary files). */
  public static final int MAX_STAGED_BLOCKS = 1024;

  /** What the store does to the disk, in order, for the ordering tests. */
  enum Io { FSYNC_FILE, LINK, FSYNC_DIR }

  /** Observes the disk operations of puts and barriers (tests record them). */
  @FunctionalInterface
  interface IoObserver {
    void done(Io operation, Path path);
  }

  /** A staged block: its verified bytes and where they wait. */
  private record Staged(Multihash multihash, byte[] data, Path tmp, Path target, Path shard) {}

  private final Path dir;
  private final boolean verifyOnRead;
  private final Consumer<Path> beforeLink;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final AtomicLong blocks = new AtomicLong();
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong putsRejected = new AtomicLong();
  private final AtomicLong blocksWritten = new AtomicLong();
  private final AtomicLong fsyncs = new AtomicLong();
  private final AtomicLong barriers = new AtomicLong();
  private final IoObserver observer;
  private final ConcurrentHashMap<Multihash, Staged> staged = new ConcurrentHashMap<>();
  private final AtomicLong stagedBytes = new AtomicLong();
  /** A shard directory was created since the last barrier: the root needs its fsync. */
  private final AtomicBoolean rootDirty = new AtomicBoolean();
  /** Held by the one caller running a barrier. */
  private final Object barrier = new Object();
  private volatile boolean barrierRunning;

  /** Opens (creating if needed) a store in {@code dir} without verify-on-read. */
  public FlatFsBlockstore(final Path dir) {
    this(dir, false);
  }

  /**
   * Opens (creating if needed) a store in {@code dir}, deletes leftover temporary files and counts
   * the blocks present.
   *
   * @param verifyOnRead re-hash every block read by {@link #get} and throw {@link
   *     CorruptBlockException} on a mismatch
   * @throws BlockstoreLockedException when another store has the directory open
   * @throws IllegalStateException when {@code SHARDING} names another shard function
   * @throws UncheckedIOException when the directory cannot be read or written
   */
  public FlatFsBlockstore(final Path dir, final boolean verifyOnRead) {
    this(dir, verifyOnRead, tmp -> {});
  }

  /**
   * As {@link #FlatFsBlockstore(Path, boolean)}, calling {@code beforeLink} with each fsynced
   * temporary file just before it is linked: the crash tests stop a writer exactly there.
   */
  FlatFsBlockstore(final Path dir, final boolean verifyOnRead, final Consumer<Path> beforeLink) {
    this(dir, verifyOnRead, beforeLink, (operation, path) -> {});
  }

  /** As above, telling {@code observer} of every fsync and link (the ordering tests). */
  FlatFsBlockstore(final Path dir, final boolean verifyOnRead, final Consumer<Path> beforeLink,
      final IoObserver observer) {
    this.dir = dir.toAbsolutePath();
    this.verifyOnRead = verifyOnRead;
    this.beforeLink = beforeLink;
    this.observer = observer;
    try {
      Files.createDirectories(this.dir);
      lockChannel = FileChannel.open(this.dir.resolve(LOCK_FILE), StandardOpenOption.CREATE,
          StandardOpenOption.WRITE);
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot open block directory " + this.dir, e);
    }
    lock = tryLock(lockChannel, this.dir);
    try {
      checkSharding();
      scanAtOpen();
    } catch (final IOException | RuntimeException e) {
      closeQuietly(e);
      if (e instanceof IOException io) {
        throw new UncheckedIOException("cannot open block directory " + this.dir, io);
      }
      throw (RuntimeException) e;
    }
  }

  private static FileLock tryLock(final FileChannel channel, final Path dir) {
    final FileLock acquired;
    try {
      acquired = channel.tryLock();
    } catch (final OverlappingFileLockException e) {
      closeChannel(channel, e);
      throw new BlockstoreLockedException(
          "block directory " + dir + " is already open in this process");
    } catch (final IOException e) {
      closeChannel(channel, e);
      throw new UncheckedIOException("cannot lock block directory " + dir, e);
    }
    if (acquired == null) {
      closeChannel(channel, null);
      throw new BlockstoreLockedException(
          "block directory " + dir + " is locked by another process (" + LOCK_FILE + ")");
    }
    return acquired;
  }

  private static void closeChannel(final FileChannel channel, final Exception cause) {
    try {
      channel.close();
    } catch (final IOException e) {
      if (cause != null) {
        cause.addSuppressed(e);
      } else {
        LOG.debug("closing lock file failed: {}", e.toString());
      }
    }
  }

  private void closeQuietly(final Exception cause) {
    try {
      close();
    } catch (final UncheckedIOException e) {
      cause.addSuppressed(e);
    }
  }

  private void checkSharding() throws IOException {
    final Path file = dir.resolve(SHARDING_FILE);
    if (Files.exists(file)) {
      final String found = Files.readString(file, StandardCharsets.US_ASCII).trim();
      if (!found.equals(SHARDING)) {
        throw new IllegalStateException(
            "block directory " + dir + " uses shard function " + found + ", not " + SHARDING);
      }
      return;
    }
    final Path tmp = Files.createTempFile(dir, TEMP_PREFIX, ".part");
    try {
      writeFully(tmp, (SHARDING + "\n").getBytes(StandardCharsets.US_ASCII));
      force(tmp);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
      syncDirectory(dir);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private void scanAtOpen() throws IOException {
    long temps = 0;
    try (DirectoryStream<Path> root = Files.newDirectoryStream(dir)) {
      for (final Path entry : root) {
        final String name = entry.getFileName().toString();
        if (name.startsWith(TEMP_PREFIX)) {
          Files.deleteIfExists(entry);
          temps++;
        } else if (isShardName(name) && Files.isDirectory(entry)) {
          temps += scanShardAtOpen(entry);
        }
      }
    }
    if (temps > 0) {
      LOG.info("deleted {} unfinished block writes in {}", temps, dir);
    }
  }

  private long scanShardAtOpen(final Path shard) throws IOException {
    long temps = 0;
    try (DirectoryStream<Path> files = Files.newDirectoryStream(shard)) {
      for (final Path file : files) {
        final String name = file.getFileName().toString();
        if (name.startsWith(TEMP_PREFIX)) {
          Files.deleteIfExists(file);
          temps++;
        } else if (parseFileName(shard.getFileName().toString(), name).isPresent()) {
          blocks.incrementAndGet();
          bytes.addAndGet(Files.size(file));
        }
      }
    }
    return temps;
  }

  /** The store's directory. */
  public Path directory() {
    return dir;
  }

  @Override
  public boolean has(final Cid cid) {
    return Blocks.isIdentity(cid) || staged.containsKey(cid.multihash())
        || Files.isRegularFile(fileOf(cid.multihash()));
  }

  @Override
  public Optional<byte[]> get(final Cid cid) {
    if (Blocks.isIdentity(cid)) {
      return Optional.of(cid.multihash().digest());
    }
    final Staged waiting = staged.get(cid.multihash());
    if (waiting != null) {
      return Optional.of(waiting.data().clone());
    }
    final Path file = fileOf(cid.multihash());
    final byte[] data;
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      final long size = checkedSize(channel.size(), file);
      data = new byte[(int) size];
      final ByteBuffer buffer = ByteBuffer.wrap(data);
      while (buffer.hasRemaining()) {
        if (channel.read(buffer) < 0) {
          // Blocks are never rewritten in place, so a short read means someone truncated it.
          throw new CorruptBlockException("block file " + file + " shrank while being read");
        }
      }
    } catch (final NoSuchFileException e) {
      return Optional.empty();
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot read block " + cid + " from " + file, e);
    }
    if (verifyOnRead && !cid.multihash().verify(data)) {
      throw new CorruptBlockException("block file " + file + " does not hash to " + cid);
    }
    return Optional.of(data);
  }

  @Override
  public Optional<Integer> size(final Cid cid) {
    if (Blocks.isIdentity(cid)) {
      return Optional.of(cid.multihash().digestLength());
    }
    final Staged waiting = staged.get(cid.multihash());
    if (waiting != null) {
      return Optional.of(waiting.data().length);
    }
    final Path file = fileOf(cid.multihash());
    try {
      return Optional.of((int) checkedSize(Files.size(file), file));
    } catch (final NoSuchFileException e) {
      return Optional.empty();
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot stat block " + cid + " at " + file, e);
    }
  }

  /**
   * The file holding the block, for zero-copy serving (e.g. Netty's {@code DefaultFileRegion}).
   * Empty for identity CIDs and absent blocks. The file may be deleted (by GC) after this returns;
   * prefer {@link #openChannel}, whose open channel keeps the data readable on POSIX systems.
   */
  public Optional<Path> path(final Cid cid) {
    if (Blocks.isIdentity(cid)) {
      return Optional.empty();
    }
    final Path file = fileOf(cid.multihash());
    return Files.isRegularFile(file) ? Optional.of(file) : Optional.empty();
  }

  /**
   * An open read-only channel on the block's file (the caller closes it), for zero-copy serving.
   * Empty for identity CIDs and absent blocks. Not verified, whatever verify-on-read says.
   *
   * @throws CorruptBlockException when the file is larger than a block can be
   */
  public Optional<FileChannel> openChannel(final Cid cid) {
    if (Blocks.isIdentity(cid)) {
      return Optional.empty();
    }
    final Path file = fileOf(cid.multihash());
    final FileChannel channel;
    try {
      channel = FileChannel.open(file, StandardOpenOption.READ);
    } catch (final NoSuchFileException e) {
      return Optional.empty();
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot open block " + cid + " at " + file, e);
    }
    try {
      checkedSize(channel.size(), file);
      return Optional.of(channel);
    } catch (final IOException | RuntimeException e) {
      closeChannel(channel, e);
      if (e instanceof IOException io) {
        throw new UncheckedIOException("cannot stat block " + cid + " at " + file, io);
      }
      throw (RuntimeException) e;
    }
  }

  @Override
  public void put(final Cid cid, final byte[] data) {
    verify(cid, data);
    if (Blocks.isIdentity(cid)) {
      return;
    }
    final String key = keyOf(cid.multihash());
    final Path shard = dir.resolve(shardOf(key));
    final Path target = shard.resolve(key + SUFFIX);
    if (Files.exists(target)) {
      if (barrierRunning) {
        // It may be a block a running barrier linked but whose directory is not fsynced yet.
        synchronized (barrier) {
          return;
        }
      }
      return;
    }
    if (staged.containsKey(cid.multihash())) {
      // Staged by someone else: durable on return, as a put promises.
      sync();
      return;
    }
    try {
      if (!Files.isDirectory(shard)) {
        Files.createDirectories(shard);
        // The new shard's entry in the root must be durable before blocks in it are.
        syncDirectory(dir);
      }
      final Path tmp = Files.createTempFile(shard, TEMP_PREFIX, ".part");
      try {
        writeFully(tmp, data);
        force(tmp);
        beforeLink.accept(tmp);
        if (link(tmp, target)) {
          observer.done(Io.LINK, target);
          syncDirectory(shard);
          blocks.incrementAndGet();
          bytes.addAndGet(data.length);
          blocksWritten.incrementAndGet();
        }
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot write block " + cid + " to " + target, e);
    }
  }

  /**
   * Writes the block to a temporary file without an fsync and keeps it in memory until the next
   * {@link #sync}, which makes it durable and gives it its final name (see the class comment).
   */
  @Override
  public void stage(final Cid cid, final byte[] data) {
    verify(cid, data);
    final Multihash multihash = cid.multihash();
    if (Blocks.isIdentity(cid) || staged.containsKey(multihash)) {
      return;
    }
    final String key = keyOf(multihash);
    final Path shard = dir.resolve(shardOf(key));
    final Path target = shard.resolve(key + SUFFIX);
    if (Files.exists(target)) {
      return;
    }
    Path tmp = null;
    try {
      if (!Files.isDirectory(shard)) {
        Files.createDirectories(shard);
        rootDirty.set(true);
      }
      tmp = Files.createTempFile(shard, TEMP_PREFIX, ".part");
      writeFully(tmp, data);
      if (staged.putIfAbsent(multihash, new Staged(multihash, data, tmp, target, shard))
          != null) {
        Files.deleteIfExists(tmp);
        return;
      }
    } catch (final IOException e) {
      deleteQuietly(tmp);
      throw new UncheckedIOException("cannot write block " + cid + " to " + target, e);
    }
    if (stagedBytes.addAndGet(data.length) > MAX_STAGED_BYTES
        || staged.size() > MAX_STAGED_BLOCKS) {
      sync();
    }
  }

  /**
   * The barrier: fsyncs every staged block's temporary file, links each to its final name, then
   * fsyncs each touched shard directory once (and the root after a new shard). A caller that
   * finds a barrier running waits for it, then runs one for whatever is still staged (nothing,
   * when that barrier took its blocks).
   *
   * @throws UncheckedIOException when a file cannot be written or fsynced; the blocks of that
   *     barrier are then dropped (not stored), since an fsync that failed may have lost them
   */
  @Override
  public void sync() {
    synchronized (barrier) {
      // The batch first: a block in it set rootDirty (if it made a shard) before it was staged.
      final List<Staged> batch = new ArrayList<>(staged.values());
      final boolean newShard = rootDirty.getAndSet(false);
      if (batch.isEmpty() && !newShard) {
        return;
      }
      barriers.incrementAndGet();
      barrierRunning = true;
      try {
        for (final Staged block : batch) {
          force(block.tmp());
        }
        final Set<Path> shards = new LinkedHashSet<>();
        for (final Staged block : batch) {
          beforeLink.accept(block.tmp());
          if (link(block.tmp(), block.target())) {
            observer.done(Io.LINK, block.target());
            shards.add(block.shard());
            blocks.incrementAndGet();
            bytes.addAndGet(block.data().length);
            blocksWritten.incrementAndGet();
          }
        }
        if (newShard) {
          syncDirectory(dir);
        }
        for (final Path shard : shards) {
          syncDirectory(shard);
        }
      } catch (final IOException | RuntimeException e) {
        rootDirty.compareAndSet(false, newShard);
        for (final Staged block : batch) {
          unstage(block);
        }
        if (e instanceof IOException io) {
          throw new UncheckedIOException("cannot make " + batch.size() + " block(s) durable in "
              + dir, io);
        }
        throw (RuntimeException) e;
      } finally {
        barrierRunning = false;
      }
      for (final Staged block : batch) {
        unstage(block);
      }
    }
  }

  /** Forgets a staged block and deletes its temporary file. */
  private void unstage(final Staged block) {
    if (staged.remove(block.multihash(), block)) {
      stagedBytes.addAndGet(-block.data().length);
    }
    deleteQuietly(block.tmp());
  }

  private static void deleteQuietly(final Path file) {
    if (file == null) {
      return;
    }
    try {
      Files.deleteIfExists(file);
    } catch (final IOException e) {
      LOG.debug("could not delete {}: {}", file, e.toString());
    }
  }

  private void verify(final Cid cid, final byte[] data) {
    try {
      Blocks.verify(cid, data);
    } catch (final InvalidBlockException e) {
      putsRejected.incrementAndGet();
      throw e;
    }
  }

  /** Makes {@code tmp} visible as {@code target}; false when another put got there first. */
  private static boolean link(final Path tmp, final Path target) throws IOException {
    try {
      Files.createLink(target, tmp);
      return true;
    } catch (final FileAlreadyExistsException e) {
      return false;
    } catch (final UnsupportedOperationException e) {
      // No hard links here: an atomic rename replaces an identical block, which is harmless.
      final boolean existed = Files.exists(target);
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
      return !existed;
    }
  }

  @Override
  public boolean delete(final Cid cid) {
    if (Blocks.isIdentity(cid)) {
      return false;
    }
    final Staged waiting = staged.remove(cid.multihash());
    if (waiting != null) {
      stagedBytes.addAndGet(-waiting.data().length);
      deleteQuietly(waiting.tmp());
    }
    final Path file = fileOf(cid.multihash());
    try {
      final long size = Files.size(file);
      // No directory fsync: a delete lost in a crash only brings back an unreferenced block,
      // which the next GC removes again.
      if (Files.deleteIfExists(file)) {
        blocks.decrementAndGet();
        bytes.addAndGet(-size);
        return true;
      }
      return waiting != null;
    } catch (final NoSuchFileException e) {
      return waiting != null;
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot delete block " + cid + " at " + file, e);
    }
  }

  /**
   * Visits every stored block as a CIDv1 {@code raw}. Walks the shard directories; files that are
   * not {@code <KEY>.data} in their right shard (temporary files, anything foreign) are ignored.
   * Blocks put or deleted during the walk may or may not be visited.
   */
  @Override
  public void forEachKey(final Consumer<Cid> visitor) {
    try (DirectoryStream<Path> root = Files.newDirectoryStream(dir)) {
      for (final Path shard : root) {
        final String shardName = shard.getFileName().toString();
        if (!isShardName(shardName) || !Files.isDirectory(shard)) {
          continue;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(shard)) {
          for (final Path file : files) {
            parseFileName(shardName, file.getFileName().toString())
                .ifPresent(mh -> visitor.accept(Blocks.rawCid(mh)));
          }
        } catch (final NoSuchFileException e) {
          LOG.debug("shard {} vanished during a walk", shard);
        }
      }
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot list blocks in " + dir, e);
    }
  }

  /** Blocks currently stored (counted at open, then kept up to date). */
  public long blockCount() {
    return blocks.get();
  }

  /** Bytes of block data currently stored (file sizes; not disk usage). */
  public long byteCount() {
    return bytes.get();
  }

  /** Blocks newly written since open (puts of a block already present do not count). */
  public long blocksWritten() {
    return blocksWritten.get();
  }

  /** fsyncs issued since open (block files, directories), by puts and barriers. */
  public long fsyncs() {
    return fsyncs.get();
  }

  /** Barriers ({@link #sync}) that had something to make durable, since open. */
  public long barriers() {
    return barriers.get();
  }

  /** Blocks staged and not yet made durable by a barrier. */
  public int stagedBlocks() {
    return staged.size();
  }

  /** Bytes of staged blocks not yet made durable (they count against a storage quota too). */
  public long stagedBytes() {
    return stagedBytes.get();
  }

  /** Puts refused since open because the bytes did not verify or were too large. */
  public long putsRejected() {
    return putsRejected.get();
  }

  /**
   * Makes the staged blocks durable, then releases the directory lock. Further calls on this
   * store fail or see stale state.
   */
  @Override
  public void close() {
    try {
      sync();
    } catch (final UncheckedIOException e) {
      LOG.warn("staged blocks not stored at close: {}", e.getMessage());
    }
    try {
      if (lock != null && lock.isValid()) {
        lock.release();
      }
      lockChannel.close();
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot release lock on " + dir, e);
    }
  }

  /** The base32 (upper case, unpadded, no multibase prefix) key of a multihash. */
  public static String keyOf(final Multihash multihash) {
    return KEY_BASE.encodeBare(multihash.bytes());
  }

  /** The {@code next-to-last/2} shard of a key (Kubo pads short keys with {@code _}). */
  static String shardOf(final String key) {
    final String padded = key.length() < 3 ? "_".repeat(3 - key.length()) + key : key;
    return padded.substring(padded.length() - 3, padded.length() - 1);
  }

  private Path fileOf(final Multihash multihash) {
    final String key = keyOf(multihash);
    return dir.resolve(shardOf(key)).resolve(key + SUFFIX);
  }

  private static boolean isShardName(final String name) {
    return name.length() == 2 && isShardChar(name.charAt(0)) && isShardChar(name.charAt(1));
  }

  private static boolean isShardChar(final char c) {
    return c == '_' || isKeyChar(c);
  }

  private static boolean isKeyChar(final char c) {
    return c >= 'A' && c <= 'Z' || c >= '2' && c <= '7';
  }

  /** The multihash a file name stands for, if it is a block file in the right shard. */
  private static Optional<Multihash> parseFileName(final String shard, final String fileName) {
    if (!fileName.endsWith(SUFFIX)) {
      return Optional.empty();
    }
    final String key = fileName.substring(0, fileName.length() - SUFFIX.length());
    if (key.isEmpty() || !key.chars().allMatch(c -> isKeyChar((char) c))
        || !shardOf(key).equals(shard)) {
      return Optional.empty();
    }
    try {
      final Multihash multihash = Multihash.decode(KEY_BASE.decodeBare(key));
      // Only the canonical spelling is ours; anything else would be listed twice or never found.
      return keyOf(multihash).equals(key) ? Optional.of(multihash) : Optional.empty();
    } catch (final MultiformatException e) {
      LOG.debug("ignoring foreign file {}/{}: {}", shard, fileName, e.getMessage());
      return Optional.empty();
    }
  }

  private static long checkedSize(final long size, final Path file) {
    if (size > Blocks.MAX_BLOCK_SIZE) {
      throw new CorruptBlockException("block file " + file + " has " + size
          + " bytes, more than the limit of " + Blocks.MAX_BLOCK_SIZE);
    }
    return size;
  }

  private static void writeFully(final Path file, final byte[] data) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      final ByteBuffer buffer = ByteBuffer.wrap(data);
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
    }
  }

  /** fsyncs a file's data and metadata (counted). */
  private void force(final Path file) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.force(true);
    }
    fsyncs.incrementAndGet();
    observer.done(Io.FSYNC_FILE, file);
  }

  private void syncDirectory(final Path directory) {
    try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
      channel.force(true);
      fsyncs.incrementAndGet();
      observer.done(Io.FSYNC_DIR, directory);
    } catch (final IOException e) {
      // Some file systems cannot fsync a directory; the block file itself is already synced.
      LOG.debug("could not fsync directory {}: {}", directory, e.toString());
    }
  }
}
