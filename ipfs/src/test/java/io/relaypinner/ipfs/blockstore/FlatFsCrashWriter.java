package io.relaypinner.ipfs.blockstore;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test fixture run as a child JVM by {@link FlatFsBlockstoreCrashTest}. {@value #WRITERS} threads
 * write random blocks of almost 2 MiB into a {@link FlatFsBlockstore} until the process is killed,
 * each printing {@code put} after every put returned. The put that follows the {@value
 * #PARK_AFTER}th stops for good between its fsynced temporary file and the link to the block's
 * name, after printing {@code parked <temp file>}, so the kill always finds one write in
 * progress.
 */
public final class FlatFsCrashWriter {
  static final int WRITERS = 3;
  static final int PARK_AFTER = 5;

  private FlatFsCrashWriter() {}

  /** Args: the block directory. */
  public static void main(final String[] args) {
    final AtomicInteger started = new AtomicInteger();
    final AtomicBoolean parked = new AtomicBoolean();
    final FlatFsBlockstore store = new FlatFsBlockstore(Path.of(args[0]), false, tmp -> {
      if (started.incrementAndGet() > PARK_AFTER && parked.compareAndSet(false, true)) {
        print("parked " + tmp);
        parkForever();
      }
    });
    for (int i = 0; i < WRITERS; i++) {
      final Thread writer = new Thread(() -> writeForever(store), "writer-" + i);
      writer.start();
    }
  }

  private static void writeForever(final FlatFsBlockstore store) {
    final Random random = new Random();
    while (true) {
      final byte[] data = new byte[Blocks.MAX_BLOCK_SIZE - random.nextInt(1024)];
      random.nextBytes(data);
      store.put(Cid.v1(Multicodec.RAW, Multihash.sha2_256(data)), data);
      print("put");
    }
  }

  private static void parkForever() {
    final CountDownLatch never = new CountDownLatch(1);
    while (true) {
      try {
        never.await();
      } catch (final InterruptedException e) {
        // Nobody interrupts this fixture; keep the interrupt visible and stay parked.
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private static synchronized void print(final String line) {
    System.out.println(line);
    System.out.flush();
  }
}
