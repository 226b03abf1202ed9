package io.relaypinner.handoff.console;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.deploy.DeployFailedException;
import io.relaypinner.handoff.deploy.HandoffMode;
import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The console's deployments: one runs at a time (a second request is refused while one runs),
 * each keeps its progress lines (at most {@link #MAX_EVENTS}) and its result; the last
 * {@link #MAX_JOBS} are kept. Thread-safe.
 */
final class ConsoleJobs {
  static final int MAX_JOBS = 20;
  static final int MAX_EVENTS = 500;

  private static final ObjectMapper JSON = new ObjectMapper();

  private final ConsoleDeployer deployer;
  private final ExecutorService executor;
  private final Clock clock;
  private final AtomicLong ids = new AtomicLong();
  private final Map<String, Job> jobs = new LinkedHashMap<>();

  private static final class Job {
    final String id;
    final String handoff;
    final String origin;
    final List<ObjectNode> events = new ArrayList<>();
    String state = "running";
    ObjectNode result;
    String error;

    Job(final String id, final String handoff, final String origin) {
      this.id = id;
      this.handoff = handoff;
      this.origin = origin;
    }
  }

  ConsoleJobs(final ConsoleDeployer deployer, final ExecutorService executor, final Clock clock) {
    this.deployer = deployer;
    this.executor = executor;
    this.clock = clock;
  }

  /** Starts a deployment, or returns empty while another one runs. */
  synchronized Optional<String> start(final Optional<HandoffMode> handoff, final URI origin) {
    if (jobs.values().stream().anyMatch(j -> j.state.equals("running"))) {
      return Optional.empty();
    }
    final Job job = new Job("d" + ids.incrementAndGet(),
        handoff.map(HandoffMode::wireName).orElse("auto"), origin.toString());
    while (jobs.size() >= MAX_JOBS) {
      jobs.remove(jobs.keySet().iterator().next());
    }
    jobs.put(job.id, job);
    try {
      executor.execute(() -> run(job, handoff, origin));
    } catch (final RejectedExecutionException e) {
      jobs.remove(job.id);
      return Optional.empty();
    }
    return Optional.of(job.id);
  }

  private void run(final Job job, final Optional<HandoffMode> handoff, final URI origin) {
    try {
      final var result = deployer.deploy(handoff, origin, (stage, detail, percent) ->
          event(job, stage, detail, percent));
      finish(job, "done", result.toJson(), null);
    } catch (final DeployFailedException e) {
      finish(job, "failed", e.result().toJson(), e.getMessage());
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      finish(job, "failed", null, "cancelled");
    } catch (final Exception e) {
      finish(job, "failed", null, e.getMessage() == null ? e.toString() : e.getMessage());
    }
  }

  private synchronized void event(final Job job, final String stage, final String detail,
      final int percent) {
    if (job.events.size() < MAX_EVENTS) {
      job.events.add(JSON.createObjectNode().put("at", clock.instant().toString())
          .put("stage", stage).put("detail", detail).put("percent", percent));
    }
  }

  private synchronized void finish(final Job job, final String state, final ObjectNode result,
      final String error) {
    job.state = state;
    job.result = result;
    job.error = error;
  }

  /** A job as JSON, or empty. */
  synchronized Optional<ObjectNode> json(final String id) {
    final Job job = jobs.get(id);
    if (job == null) {
      return Optional.empty();
    }
    final ObjectNode out = JSON.createObjectNode().put("id", job.id).put("state", job.state)
        .put("handoff", job.handoff).put("origin", job.origin);
    final ArrayNode events = out.putArray("events");
    job.events.forEach(events::add);
    out.set("result", job.result);
    out.put("error", job.error);
    return Optional.of(out);
  }
}
