package io.relaypinner.relay.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.common.budget.IpPrefix;
import io.relaypinner.common.budget.KeyedScopes;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Resource;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class NodeBudgetTest {
  private static final long HEAP = 160L << 20;
  private final NodeBudget budget = new NodeBudget(HEAP,
      new NodeBudget.Sizes(10, 3, 5, IpPrefix.DEFAULT), LimitListener.NONE);

  @Test
  void memoryRoots_shouldComeFromTheHeap_andTheSystemCapTheirSum() {
    assertThat(budget.system().limits().max(Resource.MEMORY)).isEqualTo(HEAP / 2);
    assertThat(budget.memory(NodeBudget.Surface.GATEWAY).limits().max(Resource.MEMORY))
        .isEqualTo((long) (HEAP * 0.20));
    assertThat(budget.memory(NodeBudget.Surface.GATEWAY)
        .tryReserve(Resource.MEMORY, (long) (HEAP * 0.20))).isTrue();
    assertThat(budget.memory(NodeBudget.Surface.LIBP2P)
        .tryReserve(Resource.MEMORY, (long) (HEAP * 0.25))).isTrue();
    // 45 % held: the system (50 %) refuses what the replication surface (15 %) alone would grant.
    assertThat(budget.memory(NodeBudget.Surface.REPLICATION)
        .tryReserve(Resource.MEMORY, (long) (HEAP * 0.10))).isFalse();
    assertThat(budget.hits("system", Resource.MEMORY)).isEqualTo(1);
  }

  @Test
  void perIpConnections_shouldBeCappedPerKey_withinTheTransportCap() throws Exception {
    final KeyedScopes ips = budget.libp2pIps();
    final KeyedScopes.Handle a = ips.open(budget.ipKey(InetAddress.getByName("127.0.0.2")));
    for (int i = 0; i < 3; i++) {
      assertThat(a.scope().tryReserve(Resource.CONNECTIONS, 1)).isTrue();
    }
    assertThat(a.scope().tryReserve(Resource.CONNECTIONS, 1)).isFalse();
    assertThat(budget.hits("ip", Resource.CONNECTIONS)).isEqualTo(1);
    final KeyedScopes.Handle b = ips.open(budget.ipKey(InetAddress.getByName("127.0.0.1")));
    assertThat(b.scope().tryReserve(Resource.CONNECTIONS, 1)).isTrue();
    assertThat(budget.libp2p().used(Resource.CONNECTIONS)).isEqualTo(4);
    assertThat(budget.http().used(Resource.CONNECTIONS)).isZero();
  }

  @Test
  void importScope_shouldHoldTheSlotsAndStagingBytes_withOneSlotPerClientKey() {
    final NodeBudget sized = new NodeBudget(HEAP, new NodeBudget.Sizes(10, 3, 5,
        IpPrefix.DEFAULT, 4, 64L << 20), LimitListener.NONE);
    assertThat(sized.imports()).isSameAs(sized.memory(NodeBudget.Surface.IMPORT));
    assertThat(sized.imports().limits().max(Resource.WORK)).isEqualTo(4);
    assertThat(sized.imports().limits().max(Resource.DISK)).isEqualTo(64L << 20);
    assertThat(sized.importClients().limits().max(Resource.WORK))
        .isEqualTo(NodeBudget.IMPORTS_PER_CLIENT);
    // The defaults: RELAY_IMPORT_SLOTS 2, each may stage 128 MiB.
    assertThat(budget.imports().limits().max(Resource.WORK)).isEqualTo(2);
    assertThat(budget.imports().limits().max(Resource.DISK)).isEqualTo(256L << 20);
  }

  @Test
  void circuitIps_shouldBeKeyedScopesWithTheRelaysPerIpCaps_madeOnce() {
    final io.relaypinner.libp2p.protocol.relay.CircuitRelayEngine.IpScopes scopes =
        budget.circuitIps(io.relaypinner.libp2p.protocol.relay.CircuitRelayConfig.builder()
            .maxCircuitsPerIp(5).build());
    assertThat(scopes.circuits().limits().max(Resource.STREAMS)).isEqualTo(5);
    assertThat(scopes.reservations().limits().max(Resource.WORK)).isEqualTo(64);
    assertThat(budget.circuitIps(io.relaypinner.libp2p.protocol.relay.CircuitRelayConfig.DEFAULT))
        .isSameAs(scopes);
    final KeyedScopes.Handle key = scopes.circuits().open("192.0.2.1/32");
    for (int i = 0; i < 5; i++) {
      assertThat(key.scope().tryReserve(Resource.STREAMS, 1)).isTrue();
    }
    assertThat(key.scope().tryReserve(Resource.STREAMS, 1)).isFalse();
    assertThat(budget.hits("circuit_ip", Resource.STREAMS)).isEqualTo(1);
    assertThat(budget.fixedScopes()).extracting(s -> s.kind()).contains("circuit_relay");
  }
}
