package io.relaypinner.handoff.records;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.relaypinner.handoff.json.EcmaNumbers;
import java.math.BigDecimal;

/** The JSON helpers records share: one mapper for writing responses and numbers in JS form. */
public final class RecordJson {
  /** Writes trees and records; never closes the target. Thread-safe. */
  public static final ObjectMapper MAPPER = new ObjectMapper()
      .configure(JsonGenerator.Feature.AUTO_CLOSE_TARGET, false);

  private RecordJson() {}

  /**
   * A number node that prints the way JavaScript prints {@code value} (e.g. {@code 1784808000.123},
   * never {@code 1.784808000123E9}), so times look the same from Java and JS producers.
   */
  public static JsonNode number(final double value) {
    final String text = EcmaNumbers.toString(value);
    if (text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.length() < 16) {
      return JsonNodeFactory.instance.numberNode(Long.parseLong(text));
    }
    return JsonNodeFactory.instance.numberNode(new BigDecimal(text));
  }

  /** The text of a required string member, or {@code null} when absent or not a string. */
  static String text(final JsonNode node, final String field) {
    final JsonNode value = node.get(field);
    return value != null && value.isTextual() ? value.textValue() : null;
  }
}
