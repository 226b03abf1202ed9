package io.relaypinner.ipfs.unixfs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.unixfs.UnixFsEntry.Kind;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.testkit.NodeJs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The importer and reader against {@code @helia/unixfs} and {@code ipfs-unixfs-importer} in both
 * JS stacks (A: 5.1.0 / 15.4.0, B: 7.2.1 / 16.1.5), run by {@code
 * interop/js/common/unixfs-values.mjs}: same bytes must give the same root CIDs, and directories
 * (plain and HAMT-sharded) built by JS must read back byte for byte through paths.
 */
class UnixFsJsInteropIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(120);
  private static final Map<String, JsonNode> RESULTS = new ConcurrentHashMap<>();

  /** The script's xorshift32 (13, 17, 5) generator, each state written little-endian. */
  static byte[] bytes(final int seed, final int size) {
    final byte[] out = new byte[size];
    int x = seed;
    for (int i = 0; i < size; i += 4) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      for (int j = 0; j < 4 && i + j < size; j++) {
        out[i + j] = (byte) (x >>> (8 * j));
      }
    }
    return out;
  }

  private static JsonNode js(final String stack) {
    return RESULTS.computeIfAbsent(stack, s -> {
      try {
        return JSON.readTree(NodeJs.run(s, "../common/unixfs-values.mjs", NODE_TIMEOUT).stdout());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
  }

  private static UnixFsImporter.Options options(final String name) {
    return switch (name) {
      case "helia" -> UnixFsImporter.Options.HELIA;
      case "helia-1k" -> new UnixFsImporter.Options(1024, 1024);
      case "importer-1k" -> new UnixFsImporter.Options(1024, 174);
      default -> throw new IllegalArgumentException(name);
    };
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void importBytes_shouldGiveJsRootCid_whenSameBytesAndOptions(final String stack) {
    final JsonNode files = js(stack).get("files");
    assertThat(files).hasSize(7);
    for (final JsonNode file : files) {
      final MemoryBlockstore store = new MemoryBlockstore();
      final byte[] content = bytes(file.get("seed").asInt(), file.get("size").asInt());

      final Cid cid = new UnixFsImporter(store, options(file.get("options").asText()))
          .importBytes(content);

      assertThat(cid).as(file.get("name").asText()).hasToString(file.get("cid").asText());
      assertThat(UnixFsReaderTest.readAll(new UnixFsReader(store).open(cid))).isEqualTo(content);
    }
  }

  private static MemoryBlockstore storeOf(final JsonNode blocks) {
    final MemoryBlockstore store = new MemoryBlockstore();
    for (final Map.Entry<String, JsonNode> block : blocks.properties()) {
      store.put(Cid.parse(block.getKey()), HexFormat.of().parseHex(block.getValue().asText()));
    }
    return store;
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void open_shouldReadJsFilesAndRanges_whenTrickleOrDagPbLeaves(final String stack) {
    final JsonNode dags = js(stack).get("dags");
    assertThat(dags).hasSize(2);
    for (final JsonNode dag : dags) {
      final String name = dag.get("name").asText();
      final UnixFsReader reader = new UnixFsReader(storeOf(dag.get("blocks")));
      final Cid root = Cid.parse(dag.get("root").asText());
      final byte[] content = bytes(dag.get("seed").asInt(), dag.get("size").asInt());

      assertThat(reader.stat(root)).as(name)
          .isEqualTo(new UnixFsEntry(root, Kind.FILE, content.length));
      assertThat(UnixFsReaderTest.readAll(reader.open(root))).as(name).isEqualTo(content);
      for (int from = 0; from < content.length; from += 997) {
        final int to = Math.min(content.length, from + 2500);
        assertThat(UnixFsReaderTest.readAll(reader.open(root, from, 2500)))
            .as("%s [%d, %d)", name, from, to)
            .isEqualTo(Arrays.copyOfRange(content, from, to));
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void resolveAndOpen_shouldReadJsFiles_whenJsBuiltDirectories(final String stack) {
    final Map<String, Kind> rootKinds = new HashMap<>();
    long subShards = 0;
    for (final JsonNode dir : js(stack).get("dirs")) {
      final MemoryBlockstore store = storeOf(dir.get("blocks"));
      final UnixFsReader reader = new UnixFsReader(store);
      final Cid root = Cid.parse(dir.get("root").asText());
      rootKinds.put(dir.get("name").asText(), reader.stat(root).kind());
      if (dir.get("name").asText().equals("hamt")) {
        // Two-hex-digit names are sub-shards at fanout 256; 300 names must collide somewhere.
        subShards = DagPb.decode(store.get(root).orElseThrow()).links().stream()
            .filter(link -> link.nameOrEmpty().length() == 2).count();
      }

      for (final JsonNode file : dir.get("files")) {
        final String path = file.get("path").asText();
        final byte[] content = bytes(file.get("seed").asInt(), file.get("size").asInt());

        final UnixFsEntry entry = reader.resolve(root, "/" + path);

        assertThat(entry.kind().isFile()).as(path).isTrue();
        assertThat(entry.size()).as(path).isEqualTo(content.length);
        assertThat(UnixFsReaderTest.readAll(reader.open(entry.cid()))).as(path)
            .isEqualTo(content);
        assertThat(new UnixFsImporter(new MemoryBlockstore(), UnixFsImporter.Options.HELIA)
            .importBytes(content)).as(path).isEqualTo(entry.cid());
        if (content.length > 1_048_576) {
          final int from = 1_048_576 - 5;
          assertThat(UnixFsReaderTest.readAll(reader.open(entry.cid(), from, 10))).as(path)
              .isEqualTo(Arrays.copyOfRange(content, from, from + 10));
        }
      }
      final Set<String> topLevel = new TreeSet<>();
      dir.get("files").forEach(file -> topLevel.add(file.get("path").asText().split("/")[0]));
      assertThat(reader.list(root)).extracting(DirectoryEntry::name)
          .containsExactlyInAnyOrderElementsOf(topLevel);
    }
    assertThat(subShards).as("HAMT sub-shard links in the JS-built root").isPositive();
    assertThat(rootKinds).containsEntry("nested", Kind.DIRECTORY)
        .containsEntry("hamt", Kind.HAMT_DIRECTORY);
  }
}
