package io.relaypinner.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * Logback's start-up configuration in code (found through {@code META-INF/services}): text lines
 * on stderr at INFO, Netty at INFO, until {@link Logging#configure} applies {@code LOG_LEVEL} and
 * {@code LOG_FORMAT}. It replaces a {@code logback.xml}, whose XML parsing cost about 0.1 s of
 * every start.
 */
public final class StartupLogging extends ContextAwareBase implements Configurator {
  @Override
  public ExecutionStatus configure(final LoggerContext context) {
    Logging.apply(context, "info", false);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }
}
