package io.relaypinner.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.relaypinner.handoff.deploy.HostCandidate;
import io.relaypinner.handoff.deploy.HostException;
import io.relaypinner.handoff.deploy.HostInstance;
import io.relaypinner.handoff.deploy.HostProvider;
import io.relaypinner.handoff.deploy.ImageManifest;
import io.relaypinner.handoff.deploy.InstanceRequest;
import io.relaypinner.handoff.deploy.LocalHostProvider;
import io.relaypinner.handoff.deploy.PortMapping;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Wraps the local provider and makes chosen attempts fail in chosen ways, with real guests:
 *
 * <ul>
 *   <li>{@link Fault#NEVER_HEALTHY}: the host's port forwards of the setup endpoint (80) and the
 *       relay's HTTP (9090) lead nowhere (a broken forward: nothing listens there);
 *   <li>{@link Fault#NEVER_ACKNOWLEDGE}: the host does not install the SSH key's comment, so the
 *       guest never learns its token (and never acknowledges a pull);
 *   <li>{@link Fault#DIE_DURING_CONFIGURE}: the setup endpoint is reached through a proxy that
 *       kills the guest process when {@code POST /configure} arrives and drops the connection.
 * </ul>
 */
final class FaultyHostProvider implements HostProvider {
  enum Fault { NONE, NEVER_HEALTHY, NEVER_ACKNOWLEDGE, DIE_DURING_CONFIGURE }

  private final LocalHostProvider delegate;
  private final List<Fault> faults;
  private final List<String> created = Collections.synchronizedList(new ArrayList<>());
  private final List<String> erased = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, HttpServer> proxies = new ConcurrentHashMap<>();
  private final HttpClient http = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();

  /** {@code faults.get(i)} applies to the attempt on the i-th host; missing ones are healthy. */
  FaultyHostProvider(final LocalHostProvider delegate, final List<Fault> faults) {
    this.delegate = delegate;
    this.faults = List.copyOf(faults);
  }

  List<String> created() {
    return List.copyOf(created);
  }

  List<String> erased() {
    return List.copyOf(erased);
  }

  @Override
  public String name() {
    return "faulty-local";
  }

  @Override
  public List<HostCandidate> compatibleHosts(final ImageManifest manifest) {
    return delegate.compatibleHosts(manifest);
  }

  @Override
  public HostInstance create(final InstanceRequest request) {
    final Fault fault = request.attempt() <= faults.size()
        ? faults.get(request.attempt() - 1) : Fault.NONE;
    InstanceRequest actual = request;
    if (fault == Fault.NEVER_ACKNOWLEDGE) {
      final String[] words = request.authorizedKey().split(" ");
      actual = new InstanceRequest(request.deploymentId(), request.attempt(), request.host(),
          request.manifest(), words[0] + " " + words[1], request.recordsUrl());
    }
    final HostInstance instance = delegate.create(actual);
    created.add(instance.id());
    return switch (fault) {
      case NEVER_HEALTHY -> instance
          .withMapping(ImageManifest.SETUP_PORT, PortMapping.tcp(deadPort()))
          .withMapping(ImageManifest.METRICS_PORT, PortMapping.tcp(deadPort()));
      case DIE_DURING_CONFIGURE -> instance.withMapping(ImageManifest.SETUP_PORT,
          PortMapping.tcp(killingProxy(instance)));
      default -> instance;
    };
  }

  @Override
  public void erase(final String instanceId) {
    final HttpServer proxy = proxies.remove(instanceId);
    if (proxy != null) {
      proxy.stop(0);
    }
    delegate.erase(instanceId);
    erased.add(instanceId);
  }

  /** Stops every proxy (the guests are erased through the local provider). */
  void closeProxies() {
    proxies.values().forEach(p -> p.stop(0));
    proxies.clear();
  }

  private static int deadPort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (final IOException e) {
      throw new HostException("no free port", e);
    }
  }

  private int killingProxy(final HostInstance instance) {
    final int target = instance.hostPort(ImageManifest.SETUP_PORT).orElseThrow();
    try {
      final HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
      server.createContext("/", exchange -> handle(exchange, instance.id(), target));
      server.start();
      proxies.put(instance.id(), server);
      return server.getAddress().getPort();
    } catch (final IOException e) {
      throw new HostException("cannot start the proxy", e);
    }
  }

  private void handle(final HttpExchange exchange, final String instanceId, final int target)
      throws IOException {
    try (exchange) {
      if ("POST".equals(exchange.getRequestMethod())
          && exchange.getRequestURI().getPath().equals("/configure")) {
        final long pid = delegate.list().stream().filter(i -> i.id().equals(instanceId))
            .findFirst().orElseThrow().pid();
        ProcessHandle.of(pid).ifPresent(p -> {
          p.destroyForcibly();
          p.onExit().orTimeout(10, TimeUnit.SECONDS).join();
        });
        // No answer: the connection just closes, as when the guest dies mid-request.
        return;
      }
      try {
        final HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + target + exchange.getRequestURI())).GET().build(),
            HttpResponse.BodyHandlers.ofByteArray());
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(response.statusCode(), response.body().length);
        try (OutputStream out = exchange.getResponseBody(); InputStream unused =
            exchange.getRequestBody()) {
          out.write(response.body());
        }
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (final IOException e) {
        exchange.sendResponseHeaders(502, -1);
      }
    }
  }
}
