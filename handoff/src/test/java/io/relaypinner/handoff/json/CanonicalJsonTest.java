package io.relaypinner.handoff.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** RFC 8785 examples: section 3.2.2 (serialization), 3.2.3 (sorting), Appendix B (numbers). */
class CanonicalJsonTest {
  @Test
  void canonicalize_shouldMatchTheRfc8785SerializationExample() throws Exception {
    final String input = "{\n  \"numbers\": [333333333.33333329, 1E30, 4.50, 2e-3, "
        + "0.000000000000000000000000001],\n  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042"
        + "\\u0022\\u005c\\\\\\\"\\/\",\n  \"literals\": [null, true, false]\n}";
    assertThat(CanonicalJson.canonicalize(input)).isEqualTo(
        "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
            + "\"string\":\"\u20ac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
  }

  @Test
  void canonicalize_shouldSortByUtf16CodeUnits_likeTheRfc8785SortingExample() throws Exception {
    final String input = "{\"\\u20ac\":\"Euro Sign\",\"\\r\":\"Carriage Return\","
        + "\"\\ufb33\":\"Hebrew Letter Dalet With Dagesh\",\"1\":\"One\","
        + "\"\\ud83d\\ude00\":\"Emoji: Grinning Face\",\"\\u0080\":\"Control\","
        + "\"\\u00f6\":\"Latin Small Letter O With Diaeresis\"}";
    assertThat(CanonicalJson.canonicalize(input)).isEqualTo("{\"\\r\":\"Carriage Return\","
        + "\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\","
        + "\"\u20ac\":\"Euro Sign\",\"\ud83d\ude00\":\"Emoji: Grinning Face\","
        + "\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}");
  }

  @ParameterizedTest
  @CsvSource({
      "0000000000000000,0", "8000000000000000,0", "0000000000000001,5e-324",
      "8000000000000001,-5e-324", "7fefffffffffffff,1.7976931348623157e+308",
      "ffefffffffffffff,-1.7976931348623157e+308", "4340000000000000,9007199254740992",
      "c340000000000000,-9007199254740992", "4430000000000000,295147905179352830000",
      "44b52d02c7e14af5,9.999999999999997e+22", "44b52d02c7e14af6,1e+23",
      "44b52d02c7e14af7,1.0000000000000001e+23", "444b1ae4d6e2ef4e,999999999999999700000",
      "444b1ae4d6e2ef4f,999999999999999900000", "444b1ae4d6e2ef50,1e+21",
      "3eb0c6f7a0b5ed8c,9.999999999999997e-7", "3eb0c6f7a0b5ed8d,0.000001",
      "41b3de4355555553,333333333.3333332", "41b3de4355555554,333333333.33333325",
      "41b3de4355555555,333333333.3333333", "41b3de4355555556,333333333.3333334",
      "41b3de4355555557,333333333.33333343", "becbf647612f3696,-0.0000033333333333333333",
      "43143ff3c1cb0959,1424953923781206.2"})
  void numbers_shouldMatchRfc8785AppendixB(final String bits, final String expected) {
    final double value = Double.longBitsToDouble(Long.parseUnsignedLong(bits, 16));
    assertThat(EcmaNumbers.toString(value)).isEqualTo(expected);
  }

  @Test
  void numbers_shouldRejectNanAndInfinity() {
    assertThatThrownBy(() -> EcmaNumbers.toString(Double.NaN))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> EcmaNumbers.toString(Double.POSITIVE_INFINITY))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void integers_shouldBeWrittenAsDoubles() throws Exception {
    assertThat(CanonicalJson.canonicalize("[1,-0,1.0,100000000000000000000000,1784808000.123]"))
        .isEqualTo("[1,0,1,1e+23,1784808000.123]");
  }

  @Test
  void parse_shouldRejectDuplicateNames_trailingData_andDeepNesting() {
    assertThatThrownBy(() -> CanonicalJson.parse("{\"a\":1,\"a\":2}"))
        .isInstanceOf(JsonProcessingException.class);
    assertThatThrownBy(() -> CanonicalJson.parse("{\"a\":1} {}"))
        .isInstanceOf(JsonProcessingException.class);
    assertThatThrownBy(() -> CanonicalJson.parse("[".repeat(100) + "]".repeat(100)))
        .isInstanceOf(JsonProcessingException.class);
    assertThatThrownBy(() -> CanonicalJson.parse(""))
        .isInstanceOf(JsonProcessingException.class);
    assertThatThrownBy(() -> CanonicalJson.parse(new byte[] {'"', (byte) 0xff, '"'}))
        .isInstanceOf(JsonProcessingException.class);
  }

  @Test
  void write_shouldRejectLoneSurrogates() {
    assertThatThrownBy(() -> CanonicalJson.write(JsonNodeFactory.instance.textNode("a\ud800b")))
        .hasMessageContaining("lone surrogate");
    assertThatThrownBy(() -> CanonicalJson.write(JsonNodeFactory.instance.textNode("\udc00")))
        .hasMessageContaining("lone surrogate");
  }

  @Test
  void write_shouldEscapeOnlyWhatTheRfcRequires() {
    assertThat(CanonicalJson.write(JsonNodeFactory.instance.textNode("\u0001\u001f\u007f</é")))
        .isEqualTo("\"\\u0001\\u001f\u007f</é\"");
  }
}
