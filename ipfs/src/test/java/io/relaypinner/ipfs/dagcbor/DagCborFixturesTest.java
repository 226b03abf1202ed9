package io.relaypinner.ipfs.dagcbor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.testkit.TestVectors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs {@code ipld/codec-fixtures}: every folder's DAG-CBOR block decodes, re-encodes to the same
 * bytes and CID, matches its DAG-JSON form, and every negative DAG-CBOR decode case fails.
 */
class DagCborFixturesTest {
  private static final String FIXTURES = "ipld-codec-fixtures/fixtures";
  private static final String NEGATIVE = "ipld-codec-fixtures/negative-fixtures/dag-cbor/decode";

  @TestFactory
  Stream<DynamicTest> decode_shouldRoundTripBytesAndCid_whenFixtureHasDagCbor() throws IOException {
    final Path root = TestVectors.path(FIXTURES);
    final List<Path> folders = listFolders(root);
    assertThat(folders).hasSizeGreaterThanOrEqualTo(128);
    return folders.stream().map(folder -> DynamicTest.dynamicTest(
        folder.getFileName().toString(), () -> checkFolder(folder)));
  }

  @Test
  void fixtures_shouldAllHaveDagCborForms() throws IOException {
    final Path root = TestVectors.path(FIXTURES);
    int withCbor = 0;
    int withJson = 0;
    for (final Path folder : listFolders(root)) {
      if (find(folder, ".dag-cbor").isPresent()) {
        withCbor++;
      }
      if (find(folder, ".dag-json").isPresent()) {
        withJson++;
      }
    }
    assertThat(withCbor).isEqualTo(128);
    assertThat(withJson).isEqualTo(128);
  }

  @TestFactory
  Stream<DynamicTest> decode_shouldThrowDagCborException_whenNegativeFixture() throws IOException {
    final Path dir = TestVectors.path(NEGATIVE);
    final ObjectMapper mapper = new ObjectMapper();
    final List<DynamicTest> tests = new ArrayList<>();
    for (final Path file : listSorted(dir)) {
      for (final JsonNode testCase : mapper.readTree(file.toFile())) {
        final byte[] bytes = HexFormat.of().parseHex(testCase.get("hex").textValue());
        tests.add(DynamicTest.dynamicTest(
            file.getFileName() + ": " + testCase.get("name").textValue(), () -> {
              assertThatThrownBy(() -> DagCbor.decode(bytes))
                  .isInstanceOf(DagCborException.class);
              assertThatThrownBy(() -> DagCbor.validate(bytes))
                  .isInstanceOf(DagCborException.class);
              assertThatThrownBy(() -> DagCbor.links(bytes))
                  .isInstanceOf(DagCborException.class);
            }));
      }
    }
    assertThat(tests).isNotEmpty();
    return tests.stream();
  }

  private static void checkFolder(final Path folder) throws IOException {
    final Path cborFile = find(folder, ".dag-cbor").orElseThrow();
    final byte[] bytes = Files.readAllBytes(cborFile);
    final String name = cborFile.getFileName().toString();
    final Cid expectedCid = Cid.parse(name.substring(0, name.length() - ".dag-cbor".length()));
    assertThat(DagCbor.cid(bytes)).isEqualTo(expectedCid);

    final DagCborValue value = DagCbor.decode(bytes);
    final byte[] reencoded = DagCbor.encode(value);
    assertThat(HexFormat.of().formatHex(reencoded)).isEqualTo(HexFormat.of().formatHex(bytes));
    assertThat(DagCbor.cid(reencoded)).isEqualTo(expectedCid);
    DagCbor.validate(bytes);
    assertThat(DagCbor.links(bytes)).isEqualTo(treeLinks(value));

    final Optional<Path> jsonFile = find(folder, ".dag-json");
    if (jsonFile.isPresent()) {
      final DagCborValue fromJson = DagJsonTestReader.read(Files.readAllBytes(jsonFile.get()));
      assertThat(fromJson).isEqualTo(value);
      assertThat(DagCbor.cid(DagCbor.encode(fromJson))).isEqualTo(expectedCid);
    }
  }

  /** Links in document order, from the tree, as an independent check of the streaming walk. */
  static List<Cid> treeLinks(final DagCborValue value) {
    final List<Cid> out = new ArrayList<>();
    collect(value, out);
    return out;
  }

  private static void collect(final DagCborValue value, final List<Cid> out) {
    if (value instanceof DagCborValue.Link link) {
      out.add(link.cid());
    } else if (value instanceof DagCborValue.List list) {
      list.items().forEach(item -> collect(item, out));
    } else if (value instanceof DagCborValue.Map map) {
      map.entries().values().forEach(item -> collect(item, out));
    }
  }

  private static Optional<Path> find(final Path folder, final String suffix) throws IOException {
    try (Stream<Path> files = Files.list(folder)) {
      return files.filter(f -> f.getFileName().toString().endsWith(suffix)).findFirst();
    }
  }

  private static List<Path> listFolders(final Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(Files::isDirectory).sorted().toList();
    }
  }

  private static List<Path> listSorted(final Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.sorted().toList();
    }
  }
}
