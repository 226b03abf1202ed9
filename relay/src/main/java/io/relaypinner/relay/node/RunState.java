package io.relaypinner.relay.node;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.SecretFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the previous run of the relay on this data directory stopped cleanly, and how many runs
 * did not, counted across restarts: the last line of defence's memory (issue 36).
 *
 * <p>Why a marker and not a handler: with {@code -XX:+ExitOnOutOfMemoryError}
 * ({@code packaging/jvm.options}) an {@link OutOfMemoryError} ends the JVM at once with status 3,
 * running no shutdown hook and no Java code, so nothing in the process can record it then; a
 * handler in the process (a catch, an uncaught-exception handler) would run on a heap that is
 * exhausted, and not at all for the allocation that failed on another thread. So the node writes
 * {@code state=running} to {@value #FILE} once its stores are open and {@code state=stopped} at the
 * end of a clean {@link io.relaypinner.relay.RelayNode#close()}; a start that finds
 * {@code running} knows the previous run ended without closing: an OutOfMemoryError exit, a
 * {@code kill -9}, a JVM crash, the OOM killer or a power cut. The count cannot tell these apart
 * (the supervisor's exit status can: 3 is an OutOfMemoryError, 137 a SIGKILL); it never counts a
 * clean stop. The file is rewritten atomically ({@link SecretFile#replace}), so a crash while
 * writing leaves the old or the new state, never a torn one.
 *
 * <p>Metrics: {@code relay_unclean_exits_total} (runs on this data directory that ended without
 * a clean stop, all time) and {@code relay_previous_run_unclean} (1 when this run started after
 * one).
 */
public final class RunState {
  /** The file in the data directory. */
  public static final String FILE = "run-state";
  static final String RUNNING = "running";
  static final String STOPPED = "stopped";
  private static final Logger LOG = LoggerFactory.getLogger(RunState.class);

  private final Path file;
  private final Clock clock;
  private final long uncleanExits;
  private final boolean previousUnclean;
  private final Optional<Instant> lastUncleanSeen;
  private boolean ended;

  private RunState(final Path file, final Clock clock, final long uncleanExits,
      final boolean previousUnclean, final Optional<Instant> lastUncleanSeen) {
    this.file = file;
    this.clock = clock;
    this.uncleanExits = uncleanExits;
    this.previousUnclean = previousUnclean;
    this.lastUncleanSeen = lastUncleanSeen;
  }

  /**
   * Reads the previous run's state in {@code dataDir}, counts it when it did not stop cleanly,
   * and records this run as running. A file that cannot be read or written is logged and
   * otherwise ignored: the count is a diagnostic, never a reason not to start.
   */
  public static RunState begin(final Path dataDir, final Clock clock) {
    Objects.requireNonNull(clock, "clock");
    final Path file = dataDir.resolve(FILE);
    String state = STOPPED;
    long count = 0;
    Optional<Instant> lastSeen = Optional.empty();
    try {
      for (final String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        final int eq = line.indexOf('=');
        if (line.startsWith("#") || eq < 0) {
          continue;
        }
        final String key = line.substring(0, eq).trim();
        final String value = line.substring(eq + 1).trim();
        switch (key) {
          case "state" -> state = value;
          case "unclean_exits" -> count = Math.max(0, Long.parseLong(value));
          case "last_unclean_seen" -> lastSeen = Optional.of(Instant.parse(value));
          default -> { }
        }
      }
    } catch (final NoSuchFileException e) {
      // The first run on this data directory.
    } catch (final IOException | RuntimeException e) {
      LOG.warn("run state {} unreadable ({}): counting from here", file, e.toString());
      state = STOPPED;
      count = 0;
      lastSeen = Optional.empty();
    }
    final boolean unclean = RUNNING.equals(state);
    if (unclean) {
      count++;
      lastSeen = Optional.of(clock.instant());
      LOG.warn("the previous run on this data directory did not stop cleanly (an "
          + "OutOfMemoryError exits with status 3; or kill -9, a crash, the OOM killer, a power "
          + "cut); unclean exits so far: {}", count);
    }
    final RunState run = new RunState(file, clock, count, unclean, lastSeen);
    run.write(RUNNING);
    return run;
  }

  /** Runs on this data directory that ended without a clean stop, this one's start included. */
  public long uncleanExits() {
    return uncleanExits;
  }

  /** Whether the run before this one ended without a clean stop. */
  public boolean previousRunUnclean() {
    return previousUnclean;
  }

  /** Registers {@code relay_unclean_exits_total} and {@code relay_previous_run_unclean}. */
  public void register(final PrometheusRegistry registry) {
    CounterWithCallback.builder()
        .name("relay_unclean_exits_total")
        .help("Runs of the relay on this data directory that ended without a clean stop "
            + "(an OutOfMemoryError exit, kill -9, a crash), counted across restarts")
        .callback(callback -> callback.call(uncleanExits))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_previous_run_unclean")
        .help("1 when the run before this one ended without a clean stop, else 0")
        .callback(callback -> callback.call(previousUnclean ? 1 : 0))
        .register(registry);
  }

  /** Records the clean stop: called last in a clean close; idempotent. */
  public synchronized void end() {
    if (!ended) {
      ended = true;
      write(STOPPED);
    }
  }

  private void write(final String state) {
    final StringBuilder text = new StringBuilder()
        .append("# relay-pinner: written at start and at a clean stop (docs/operators.md, "
            + "\"Memory\"); do not edit while the relay runs\n")
        .append("state=").append(state).append('\n')
        .append("unclean_exits=").append(uncleanExits).append('\n');
    lastUncleanSeen.ifPresent(t -> text.append("last_unclean_seen=").append(t).append('\n'));
    text.append("written=").append(clock.instant()).append('\n');
    try {
      SecretFile.replace(file, text.toString().getBytes(StandardCharsets.UTF_8));
    } catch (final IOException | RuntimeException e) {
      LOG.warn("run state {} not written ({}): unclean exits may go uncounted", file,
          e.toString());
    }
  }
}
