package io.relaypinner.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import java.util.Locale;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Applies {@code LOG_LEVEL} and {@code LOG_FORMAT} to Logback once the configuration is known.
 * Logs go to standard error, one line per event: text, or one JSON object per line.
 */
final class Logging {
  static final String TEXT_PATTERN =
      "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX, UTC} %-5level %logger{0} - %msg%n";

  private Logging() {}

  /**
   * @param level trace, debug, info, warn or error
   * @param json true for one JSON object per line
   */
  static void configure(final String level, final boolean json) {
    configure(level, json, Map.of());
  }

  /**
   * As {@link #configure(String, boolean)}, and single logger categories (package names) at
   * their own level over it (orbitdb-relay's logging switches, {@code JsRelayEnvironment}).
   */
  static void configure(final String level, final boolean json,
      final Map<String, String> loggerLevels) {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      apply(context, level, json);
      loggerLevels.forEach((logger, value) -> context.getLogger(logger)
          .setLevel(Level.toLevel(value.toUpperCase(Locale.ROOT), Level.INFO)));
    }
  }

  /** Sets {@code context} up: one stderr appender with the given level and format. */
  static void apply(final LoggerContext context, final String level, final boolean json) {
    final Encoder<ILoggingEvent> encoder;
    if (json) {
      final JsonEncoder jsonEncoder = new JsonEncoder();
      jsonEncoder.setWithSequenceNumber(false);
      jsonEncoder.setWithNanoseconds(false);
      jsonEncoder.setWithContext(false);
      // Operators read "message" as text: the formatted one, not the {} template and arguments.
      jsonEncoder.setWithMessage(false);
      jsonEncoder.setWithArguments(false);
      jsonEncoder.setWithFormattedMessage(true);
      jsonEncoder.setContext(context);
      jsonEncoder.start();
      encoder = jsonEncoder;
    } else {
      final PatternLayoutEncoder pattern = new PatternLayoutEncoder();
      pattern.setPattern(TEXT_PATTERN);
      pattern.setContext(context);
      pattern.start();
      encoder = pattern;
    }
    final ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
    appender.setName("stderr");
    appender.setTarget("System.err");
    appender.setEncoder(encoder);
    appender.setContext(context);
    appender.start();

    final Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.detachAndStopAllAppenders();
    root.addAppender(appender);
    root.setLevel(Level.toLevel(level.toUpperCase(Locale.ROOT), Level.INFO));
    // Netty's own debug output is noise for operators unless they ask for trace.
    final Level rootLevel = root.getLevel();
    context.getLogger("io.netty").setLevel(rootLevel == Level.TRACE || rootLevel.isGreaterOrEqual(
        Level.INFO) ? rootLevel : Level.INFO);
    // HikariCP warns once per broken pooled connection when PostgreSQL goes away; the datastore
    // logs the outage once (StoreAvailability), so its lines show at DEBUG and below only.
    context.getLogger("com.zaxxer.hikari").setLevel(
        rootLevel.isGreaterOrEqual(Level.INFO) ? Level.ERROR : rootLevel);
  }
}
