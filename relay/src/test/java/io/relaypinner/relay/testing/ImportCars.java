package io.relaypinner.relay.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.car.CarWriter;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.relay.export.ImportStaging;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * CARs for issue 36's attacks on {@code POST /pinning/import}, shared by the in-process attack
 * ({@code ImportAttackIT}) and the one against the launcher's relay JVM ({@code SurfaceAttackIT}
 * in cli): one-writer databases as CARs, a 120 MiB CAR generated as it is sent, and a raw
 * request head and answer for uploads that a {@code java.net.http} client cannot stall.
 */
public final class ImportCars {
  /** Size of one leaf of {@link LargeCar}. */
  public static final int LEAF = 1 << 20;

  private ImportCars() {}

  /** A one-writer database in {@code store}; its entries name {@code media}, if any. */
  public record Database(OrbitDbAddress address, Entry head, MemoryBlockstore store) {}

  /** A database called {@code name}: one entry naming {@code media} if given, else three. */
  public static Database database(final String name, final Cid media) {
    final JavaWriter writer = new JavaWriter();
    final MemoryBlockstore store = new MemoryBlockstore();
    store.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(store, name, List.of(writer.id()));
    if (media == null) {
      return new Database(address, writer.chain(store, address, 3).get(2), store);
    }
    final byte[] block = writer.entry(address, 1, List.of(), List.of(),
        DagCborValue.map(Map.of("cid", DagCborValue.of(media.toString()))));
    final Entry entry = Entry.decode(block);
    store.put(entry.cid(), block);
    return new Database(address, entry, store);
  }

  /** The database as an export CAR: roots manifest and head, every block of its store. */
  public static byte[] car(final Database db) throws IOException {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (CarWriter writer = new CarWriter(out, List.of(db.address().manifest(),
        db.head().cid()))) {
      final List<Cid> all = new ArrayList<>();
      db.store().forEachKey(all::add);
      for (final Cid cid : all) {
        writer.write(cid, db.store().get(cid).orElseThrow());
      }
    }
    return out.toByteArray();
  }

  /** Leaf {@code i}: {@link #LEAF} bytes, the same for the same {@code i}. */
  public static byte[] leaf(final int i) {
    final byte[] data = new byte[LEAF];
    new Random(i).nextBytes(data);
    return data;
  }

  /** One CAR section: its length prefix and CID, then {@code data}. */
  public static byte[] section(final Cid cid, final byte[] data) {
    final byte[] prefix = CarWriter.sectionPrefix(cid, data.length);
    final byte[] out = new byte[prefix.length + data.length];
    System.arraycopy(prefix, 0, out, 0, prefix.length);
    System.arraycopy(data, 0, out, prefix.length, data.length);
    return out;
  }

  /** What runs before the last leaf is sent (the test looks at the relay then). */
  @FunctionalInterface
  public interface BeforeLastLeaf {
    void run() throws Exception;
  }

  /**
   * A database whose one entry names a dag-pb file of {@code leaves} raw leaves of
   * {@link #LEAF} bytes: its CAR ({@link #body}) is generated as it is sent, one leaf at a
   * time, so the sender never holds it.
   */
  public static final class LargeCar {
    private final int leaves;
    private final List<Cid> leafCids = new ArrayList<>();
    private final byte[] rootBlock;
    private final Cid root;
    private final Database db;
    private final byte[] head;
    private final AtomicLong sent = new AtomicLong();

    private LargeCar(final int leaves) {
      this.leaves = leaves;
      final List<PbLink> links = new ArrayList<>();
      for (int i = 0; i < leaves; i++) {
        final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(leaf(i)));
        leafCids.add(cid);
        links.add(PbLink.of(cid, "", LEAF));
      }
      this.rootBlock = DagPb.encode(PbNode.of(new byte[] {8, 2}, links));
      this.root = DagPb.cidOf(rootBlock);
      this.db = database("large-import", root);
      try {
        this.head = car(db);
      } catch (final IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** A CAR of {@code leaves} MiB of media (120: issue 36's attack). */
    public static LargeCar of(final int leaves) {
      return new LargeCar(leaves);
    }

    /** The file's root (the media CID the entry names). */
    public Cid root() {
      return root;
    }

    public List<Cid> leafCids() {
      return List.copyOf(leafCids);
    }

    /** Bytes {@link #body} streams have handed out so far. */
    public long sent() {
      return sent.get();
    }

    /**
     * The CAR as a body for {@code BodyPublishers.ofInputStream}: the database's blocks, the
     * file's root, then the leaves one at a time; {@code beforeLastLeaf} runs when the last leaf
     * is due (its failure fails the read). One pass over the sections: each stream the supplier
     * gives goes on where the last one stopped.
     */
    public Supplier<InputStream> body(final BeforeLastLeaf beforeLastLeaf) {
      final Enumeration<InputStream> sections = new Enumeration<>() {
        private int next = -2;

        @Override
        public boolean hasMoreElements() {
          return next < leaves;
        }

        @Override
        public InputStream nextElement() {
          final byte[] bytes;
          if (next == -2) {
            bytes = head;
          } else if (next == -1) {
            bytes = section(root, rootBlock);
          } else {
            if (next == leaves - 1) {
              try {
                beforeLastLeaf.run();
              } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
              } catch (final RuntimeException e) {
                throw e;
              } catch (final Exception e) {
                throw new IllegalStateException(e);
              }
            }
            bytes = section(leafCids.get(next), leaf(next));
          }
          next++;
          sent.addAndGet(bytes.length);
          return new ByteArrayInputStream(bytes);
        }
      };
      return () -> new SequenceInputStream(sections);
    }
  }

  /** Bytes staged in {@code dataDir}'s import staging area now (0 when it does not exist). */
  public static long stagedBytes(final Path dataDir) throws IOException {
    final Path staging = dataDir.resolve(ImportStaging.DIRECTORY);
    if (!Files.isDirectory(staging)) {
      return 0;
    }
    try (Stream<Path> files = Files.list(staging)) {
      return files.mapToLong(file -> {
        try {
          return Files.size(file);
        } catch (final IOException e) {
          return 0;
        }
      }).sum();
    }
  }

  /**
   * Starts a daemon thread that sends {@code car}'s first 100 bytes to {@code socket} one a
   * second while {@code going} holds (the slow import of issue 36); it stops quietly when the
   * relay closes the connection.
   */
  public static Thread trickle(final Socket socket, final byte[] car,
      final java.util.concurrent.atomic.AtomicBoolean going) {
    final Thread trickle = new Thread(() -> {
      try {
        final java.io.OutputStream out = socket.getOutputStream();
        for (int i = 0; i < 100 && going.get(); i++) {
          out.write(car[i]);
          out.flush();
          Thread.sleep(1_000);
        }
      } catch (final IOException e) {
        // The relay closed the connection: what the test waits for.
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "slow-import");
    trickle.setDaemon(true);
    trickle.start();
    return trickle;
  }

  /** Writes the head of {@code POST /pinning/import} declaring {@code length} body bytes. */
  public static void importHead(final Socket socket, final long length, final boolean close)
      throws IOException {
    socket.getOutputStream().write(("POST /pinning/import HTTP/1.1\r\nHost: relay\r\n"
        + "Content-Length: " + length + "\r\n" + (close ? "Connection: close\r\n" : "")
        + "\r\n").getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
  }

  /**
   * The status line and the body of the one answer on {@code socket}, read until the relay
   * closes (a reset after the answer, as when a trickler writes to the closed connection, ends
   * the reading too).
   */
  public static String[] answer(final Socket socket) throws IOException {
    final ByteArrayOutputStream received = new ByteArrayOutputStream();
    final byte[] buffer = new byte[8192];
    try {
      for (int n = socket.getInputStream().read(buffer); n >= 0;
          n = socket.getInputStream().read(buffer)) {
        received.write(buffer, 0, n);
      }
    } catch (final SocketException e) {
      if (received.size() == 0) {
        throw e;
      }
    }
    final String text = received.toString(StandardCharsets.UTF_8);
    return new String[] {text.substring(0, text.indexOf("\r\n")),
        text.substring(text.indexOf("\r\n\r\n") + 4)};
  }

  /**
   * The CAR of one database of a conformance vectors file: roots [manifest, heads…], every block
   * of the file (base64 under {@code blocks}), then {@code extra}.
   */
  public static byte[] vectorCar(final JsonNode vectors, final JsonNode db,
      final Map<Cid, byte[]> extra) throws IOException {
    final List<Cid> roots = new ArrayList<>();
    roots.add(Cid.parse(db.get("address").asText().substring("/orbitdb/".length())));
    db.get("heads").forEach(h -> roots.add(Cid.parse(h.asText())));
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (CarWriter writer = new CarWriter(out, roots)) {
      final Iterator<Map.Entry<String, JsonNode>> blocks = vectors.get("blocks").fields();
      while (blocks.hasNext()) {
        final Map.Entry<String, JsonNode> block = blocks.next();
        writer.write(Cid.parse(block.getKey()),
            Base64.getDecoder().decode(block.getValue().asText()));
      }
      for (final Map.Entry<Cid, byte[]> block : extra.entrySet()) {
        writer.write(block.getKey(), block.getValue());
      }
    }
    return out.toByteArray();
  }
}
