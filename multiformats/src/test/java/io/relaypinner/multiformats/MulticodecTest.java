package io.relaypinner.multiformats;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MulticodecTest {
  private record Entry(String tag, long code) {}

  private static Map<String, Entry> table() {
    final Map<String, Entry> table = new HashMap<>();
    for (final String line : TestData.lines("multicodec/table.csv")) {
      final String[] f = line.split(",", -1);
      if (f.length < 3 || f[0].trim().equals("name")) {
        continue;
      }
      final String code = f[2].trim();
      table.put(f[0].trim(), new Entry(f[1].trim(), Long.parseLong(code.substring(2), 16)));
    }
    return table;
  }

  @Test
  void everyCodec_shouldMatchMulticodecTable_byNameTagAndCode() {
    final Map<String, Entry> table = table();
    assertThat(table).hasSizeGreaterThan(600);
    for (final Multicodec codec : Multicodec.values()) {
      assertThat(table.get(codec.codecName()))
          .as(codec.name())
          .isEqualTo(new Entry(codec.tag(), codec.code()));
    }
  }

  @Test
  void everyMultiaddrProtocol_shouldMatchMulticodecTable_byNameAndCode() {
    final Map<String, Entry> table = table();
    for (final MultiaddrProtocol p : MultiaddrProtocol.values()) {
      assertThat(table.get(p.protocolName()))
          .as(p.name())
          .isEqualTo(new Entry("multiaddr", p.code()));
    }
  }

  @Test
  void lookups_shouldFindByCodeAndName() {
    for (final Multicodec codec : Multicodec.values()) {
      assertThat(Multicodec.forCode(codec.code())).contains(codec);
      assertThat(Multicodec.forName(codec.codecName())).contains(codec);
      assertThat(Multicodec.nameOf(codec.code())).isEqualTo(codec.codecName());
    }
    assertThat(Multicodec.forCode(0x1e)).isEmpty();
    assertThat(Multicodec.nameOf(0xb0)).isEqualTo("0xb0");
    assertThat(Multicodec.DAG_JSON.code()).isEqualTo(0x0129);
    assertThat(Multicodec.LIBP2P_KEY.code()).isEqualTo(0x72);
  }
}
