package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.config.SyncConfig;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MediaCidExtractorTest {
  private final MediaCidExtractor extractor =
      new MediaCidExtractor(SyncConfig.DEFAULT_MEDIA_CID_FIELDS);

  private static Cid cid(final String seed) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(seed.getBytes(StandardCharsets.UTF_8)));
  }

  private static String text(final Cid cid) {
    return cid.toString(Multibase.Base.BASE32);
  }

  private static DagCborValue map(final Object... kv) {
    final Map<String, DagCborValue> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      final Object v = kv[i + 1];
      final DagCborValue value;
      if (v instanceof DagCborValue d) {
        value = d;
      } else if (v instanceof String s) {
        value = DagCborValue.of(s);
      } else if (v instanceof Cid c) {
        value = DagCborValue.of(c);
      } else if (v == null) {
        value = DagCborValue.nullValue();
      } else {
        value = DagCborValue.of(((Number) v).longValue());
      }
      m.put((String) kv[i], value);
    }
    return DagCborValue.Map.of(m);
  }

  @Test
  void extract_shouldFindImageCid_whenEventsAddPayload() {
    final Cid image = cid("a");
    final var result = extractor.extract(map("op", "ADD", "key", null, "value",
        map("text", "hello", "imageCid", text(image))));
    assertThat(result.cids()).containsExactly(image);
    assertThat(result.invalid()).isZero();
  }

  @Test
  void extract_shouldFindEveryDefaultField_whenDocumentsPutPayload() {
    final Cid a = cid("a");
    final Cid b = cid("b");
    final Cid c = cid("c");
    final Cid d = cid("d");
    final Cid e = cid("e");
    final Cid f = cid("f");
    final Cid g = cid("g");
    final var result = extractor.extract(map("op", "PUT", "key", "doc-1", "value",
        map("_id", "doc-1", "imageCID", text(a), "image", map("cid", text(b)),
            "profilePictureCid", text(c), "mediaIds", DagCborValue.list(DagCborValue.of(text(d)),
                DagCborValue.of(text(e))), "thumbnailCid", text(f), "contentCid", text(g))));
    assertThat(result.cids()).containsExactlyInAnyOrder(a, b, c, d, e, f, g);
  }

  @Test
  void extract_shouldTakeValue_whenKeyValuePutOfProfilePictureKey() {
    final Cid picture = cid("p");
    assertThat(extractor.extract(map("op", "PUT", "key", "profilePicture", "value",
        text(picture))).cids()).containsExactly(picture);
    assertThat(extractor.extract(map("_id", "profilePictureCID", "value", text(picture)))
        .cids()).containsExactly(picture);
  }

  @Test
  void extract_shouldFindCids_whenInsideJsonStringsUpToDepthFour() {
    final Cid inner = cid("inner");
    final String level1 = "{\"imageCid\":\"" + text(inner) + "\"}";
    final String level2 = "{\"post\":" + quote(level1) + "}";
    final String level3 = "[" + quote(level2) + "]";
    final String level4 = "{\"x\":" + quote(level3) + "}";
    assertThat(extractor.extract(map("op", "ADD", "value", level1)).cids())
        .containsExactly(inner);
    assertThat(extractor.extract(map("op", "ADD", "value", level4)).cids())
        .containsExactly(inner);
    final String level5 = "{\"y\":" + quote(level4) + "}";
    assertThat(extractor.extract(map("op", "ADD", "value", level5)).cids()).isEmpty();
  }

  private static String quote(final String json) {
    return "\"" + json.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  @Test
  void extract_shouldTakeEveryLink_whenPayloadHasTag42Links() {
    final Cid linked = cid("link");
    final Cid nested = cid("nested");
    final var result = extractor.extract(map("op", "ADD", "value",
        map("anything", linked, "deep", DagCborValue.list(map("x", nested)))));
    assertThat(result.cids()).containsExactlyInAnyOrder(linked, nested);
  }

  @Test
  void extract_shouldSkipAndCount_whenCidStringsAreInvalid() {
    final Cid good = cid("good");
    final var result = extractor.extract(map("op", "ADD", "value", map("imageCid", "not-a-cid",
        "mediaIds", DagCborValue.list(DagCborValue.of("bafy???"), DagCborValue.of(text(good))),
        "cid", "")));
    assertThat(result.cids()).containsExactly(good);
    assertThat(result.invalid()).isEqualTo(2);
  }

  @Test
  void extract_shouldIgnoreOtherFields_whenNotConfigured() {
    final Cid a = cid("a");
    final var custom = new MediaCidExtractor(List.of("coverCid"));
    assertThat(custom.extract(map("op", "ADD", "value", map("imageCid", text(a)))).cids())
        .isEmpty();
    assertThat(custom.extract(map("op", "ADD", "value", map("coverCid", text(a)))).cids())
        .containsExactly(a);
    assertThat(extractor.extract(map("op", "ADD", "value", map("text", text(a)))).cids())
        .isEmpty();
  }

  @Test
  void extract_shouldStayBounded_whenPayloadIsHuge() {
    DagCborValue deep = DagCborValue.of(text(cid("bottom")));
    for (int i = 0; i < 200; i++) {
      deep = DagCborValue.list(deep);
    }
    final var result = extractor.extract(map("op", "ADD", "value", map("imageCid", deep)));
    assertThat(result.cids()).isEmpty();
  }
}
