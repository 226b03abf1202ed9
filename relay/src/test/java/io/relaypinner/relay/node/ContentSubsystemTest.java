package io.relaypinner.relay.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.relay.pinsvc.PinningServiceEngine;
import io.relaypinner.testkit.MutableClock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ContentSubsystem} alone: on memory storage and a host that listens nowhere (no socket),
 * with a {@link MutableClock}.
 */
class ContentSubsystemTest {
  private final MutableClock clock = NodeFixtures.clock();
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final EventLoops loops = EventLoops.create(1, "content-test");
  private final StorageSubsystem storage = NodeFixtures.memoryStorage(registry, clock);
  private final Host host = new Host(NodeFixtures.IDENTITY.privateKey(),
      HostConfig.builder().build(), loops, clock);

  @AfterEach
  void tearDown() {
    host.close();
    storage.close();
    loops.shutdownGracefully(Duration.ofSeconds(2));
  }

  @Test
  void content_shouldShareOnePinner_andEndItsExecutor_whenClosed() throws Exception {
    final ContentSubsystem content = new ContentSubsystem(storage, host, registry, clock,
        NodeTuning.DEFAULT);
    assertThat(host.protocols().protocols()).anyMatch(id -> id.startsWith("/ipfs/bitswap"));
    assertThat(content.bitswap()).isNotNull();
    assertThat(content.pinner()).isNotNull();
    // The gateway fallback fetches through the same pinner; made once.
    assertThat(content.gatewayContent()).isPresent();
    assertThat(content.gatewayContent()).isSameAs(content.gatewayContent());
    assertThat(content.pinningService()).isEmpty();
    final PinningServiceEngine engine =
        content.startPinningService(() -> List.of("/ip4/127.0.0.1/tcp/1"), a -> true,
            new ObjectMapper());
    assertThat(content.startPinningService(List::of, a -> true, new ObjectMapper())).isSameAs(engine);
    assertThat(content.pinningService()).containsSame(engine);
    final Thread worker = NodeFixtures.threadOf(content.executor());

    content.close();

    assertThat(content.executor().isTerminated()).isTrue();
    worker.join(5_000);
    assertThat(worker.isAlive()).isFalse();
    content.close();
  }
}
