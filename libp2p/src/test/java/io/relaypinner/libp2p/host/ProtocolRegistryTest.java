package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ProtocolRegistryTest {
  @Test
  void registry_shouldMatchExactIdsAndFamilies_andAdvertiseOnlyExactOnes() throws Exception {
    final ProtocolRegistry registry = new ProtocolRegistry();
    final List<String> installed = new ArrayList<>();
    registry.register("/ipfs/id/1.0.0", (ch, p) -> installed.add("id:" + p));
    registry.register("/ipfs/ping/1.0.0", (ch, p) -> installed.add("ping:" + p));
    registry.registerFamily("/orbitdb/heads/", p -> p.endsWith("/zdpuKnown"),
        (ch, p) -> installed.add("heads:" + p));

    assertThat(registry.protocols()).containsExactly("/ipfs/id/1.0.0", "/ipfs/ping/1.0.0");
    assertThat(registry.advertised()).isEqualTo(registry.protocols());
    assertThat(registry.matches("/ipfs/id/1.0.0")).isTrue();
    assertThat(registry.matches("/orbitdb/heads/orbitdb/zdpuKnown")).isTrue();
    assertThat(registry.matches("/orbitdb/heads/orbitdb/zdpuOther")).isFalse();
    assertThat(registry.matches("/meshsub/1.2.0")).isFalse();

    final EmbeddedChannel channel = new EmbeddedChannel();
    registry.install(channel, "/ipfs/ping/1.0.0");
    registry.install(channel, "/orbitdb/heads/orbitdb/zdpuKnown");
    assertThat(installed).containsExactly("ping:/ipfs/ping/1.0.0",
        "heads:/orbitdb/heads/orbitdb/zdpuKnown");
  }

  @Test
  void unregister_shouldNotifyListeners_andCloseStreamsNegotiatedMeanwhile() throws Exception {
    final ProtocolRegistry registry = new ProtocolRegistry();
    final AtomicInteger changes = new AtomicInteger();
    registry.onChange(changes::incrementAndGet);
    registry.register("/x/1.0.0", (ch, p) -> { });
    registry.register("/x/1.0.0", (ch, p) -> { });
    registry.unregister("/x/1.0.0");
    assertThat(changes).hasValue(2);
    final EmbeddedChannel channel = new EmbeddedChannel();
    registry.install(channel, "/x/1.0.0");
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void register_shouldRejectInvalidIds() {
    final ProtocolRegistry registry = new ProtocolRegistry();
    assertThatThrownBy(() -> registry.register("na", (ch, p) -> { }))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> registry.register("/a\n", (ch, p) -> { }))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
