package io.relaypinner.relay.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.relay.gateway.ByteRange.Kind;
import org.junit.jupiter.api.Test;

class ByteRangeTest {
  @Test
  void parse_shouldServeEverything_whenAbsentInvalidOrSeveral() {
    assertThat(ByteRange.parse(null, 100)).isEqualTo(new ByteRange(Kind.FULL, 0, 99));
    assertThat(ByteRange.parse("items=0-1", 100).kind()).isEqualTo(Kind.FULL);
    assertThat(ByteRange.parse("bytes=0-1,4-5", 100).kind()).isEqualTo(Kind.FULL);
    assertThat(ByteRange.parse("bytes=5-1", 100).kind()).isEqualTo(Kind.FULL);
    assertThat(ByteRange.parse("bytes=-", 100).kind()).isEqualTo(Kind.FULL);
    assertThat(ByteRange.parse("bytes=a-3", 100).kind()).isEqualTo(Kind.FULL);
    assertThat(ByteRange.parse("bytes=1", 100).kind()).isEqualTo(Kind.FULL);
    assertThat(ByteRange.parse(null, 0)).isEqualTo(new ByteRange(Kind.FULL, 0, -1));
    assertThat(ByteRange.parse(null, 0).length()).isZero();
  }

  @Test
  void parse_shouldGiveOneRange_forClosedOpenAndSuffixForms() {
    assertThat(ByteRange.parse("bytes=0-9", 100)).isEqualTo(new ByteRange(Kind.PARTIAL, 0, 9));
    assertThat(ByteRange.parse("Bytes= 10-", 100))
        .isEqualTo(new ByteRange(Kind.PARTIAL, 10, 99));
    assertThat(ByteRange.parse("bytes=90-500", 100))
        .isEqualTo(new ByteRange(Kind.PARTIAL, 90, 99));
    assertThat(ByteRange.parse("bytes=-10", 100))
        .isEqualTo(new ByteRange(Kind.PARTIAL, 90, 99));
    assertThat(ByteRange.parse("bytes=-1000", 100))
        .isEqualTo(new ByteRange(Kind.PARTIAL, 0, 99));
    assertThat(ByteRange.parse("bytes=0-99999999999999999999999", 100))
        .isEqualTo(new ByteRange(Kind.PARTIAL, 0, 99));
    assertThat(ByteRange.parse("bytes=5-5", 100).length()).isEqualTo(1);
  }

  @Test
  void parse_shouldBeUnsatisfiable_outsideTheContent() {
    assertThat(ByteRange.parse("bytes=100-", 100).kind()).isEqualTo(Kind.UNSATISFIABLE);
    assertThat(ByteRange.parse("bytes=100-200", 100).kind()).isEqualTo(Kind.UNSATISFIABLE);
    assertThat(ByteRange.parse("bytes=-0", 100).kind()).isEqualTo(Kind.UNSATISFIABLE);
    assertThat(ByteRange.parse("bytes=0-", 0).kind()).isEqualTo(Kind.UNSATISFIABLE);
    assertThat(ByteRange.parse("bytes=-5", 0).kind()).isEqualTo(Kind.UNSATISFIABLE);
  }
}
