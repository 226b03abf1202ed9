// Benchmark helper: imports <MiB> of random bytes into <datadir> as a UnixFS file (the Helia
// layout: 1 MiB raw leaves) and pins it, then prints the root CID. Run with the shaded jar on the
// class path while no relay uses <datadir>:
//   java -cp cli/target/relay-pinner.jar bench/ImportAndPin.java <datadir> <MiB>
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.multiformats.Cid;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Random;

public final class ImportAndPin {
  public static void main(final String[] args) throws Exception {
    final Path dir = Path.of(args[0]);
    final long size = Long.parseLong(args[1]) * 1024 * 1024;
    final Random random = new Random(size);
    final InputStream content = new InputStream() {
      private long left = size;

      @Override
      public int read() {
        return left-- > 0 ? random.nextInt(256) : -1;
      }

      @Override
      public int read(final byte[] b, final int off, final int len) {
        if (left <= 0) {
          return -1;
        }
        final int n = (int) Math.min(len, left);
        final byte[] chunk = new byte[n];
        random.nextBytes(chunk);
        System.arraycopy(chunk, 0, b, off, n);
        left -= n;
        return n;
      }
    };
    try (FlatFsBlockstore blocks = new FlatFsBlockstore(dir.resolve("blocks"));
        MvStoreDatastore datastore = new MvStoreDatastore(dir.resolve("datastore.mv"))) {
      final Cid root = new UnixFsImporter(blocks, UnixFsImporter.Options.HELIA)
          .importStream(content);
      new PinStore(datastore, blocks, CodecLinkResolver.standard())
          .pin(root, io.relaypinner.ipfs.pin.PinHolder.of("bench", "import"));
      System.out.println(root);
    }
  }
}
