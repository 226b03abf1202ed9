package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PeerStoreTest {
  private static final PeerId A = PeerId.parse(
      "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN");
  private static final PeerId B = PeerId.parse(
      "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N");

  @Test
  void update_shouldKeepKnownParts_whenAnUpdateOmitsThem() {
    final PeerStore store = new PeerStore(10);
    store.update(A, null, List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/1")),
        List.of("/ipfs/id/1.0.0"), "js-libp2p/3.3.11");
    store.update(A, null, null, List.of("/meshsub/1.2.0"), null);
    final PeerStore.PeerInfo info = store.get(A).orElseThrow();
    assertThat(info.protocols()).containsExactly("/meshsub/1.2.0");
    assertThat(info.addresses()).containsExactly(Multiaddr.parse("/ip4/127.0.0.1/tcp/1"));
    assertThat(info.agentVersion()).contains("js-libp2p/3.3.11");
  }

  @Test
  void store_shouldForgetTheLeastRecentlyUsedPeer_whenFull() {
    final PeerStore store = new PeerStore(1);
    store.addAddress(A, Multiaddr.parse("/ip4/127.0.0.1/tcp/1"));
    store.addAddress(B, Multiaddr.parse("/ip4/127.0.0.1/tcp/2"));
    assertThat(store.size()).isEqualTo(1);
    assertThat(store.get(A)).isEmpty();
    assertThat(store.get(B)).isPresent();
  }

  @Test
  void lists_shouldBeCapped_perPeer() {
    final PeerStore store = new PeerStore(10);
    final List<Multiaddr> many = new ArrayList<>();
    for (int i = 1; i <= 500; i++) {
      many.add(Multiaddr.parse("/ip4/127.0.0.1/tcp/" + i));
    }
    store.update(A, null, many, null, null);
    assertThat(store.get(A).orElseThrow().addresses()).hasSize(PeerStore.MAX_ADDRESSES);
    store.addAddress(A, Multiaddr.parse("/ip4/10.0.0.1/tcp/1"));
    assertThat(store.get(A).orElseThrow().addresses()).hasSize(PeerStore.MAX_ADDRESSES);
  }

  @Test
  void connectedPeers_shouldBeKept_andForgottenLeastRecentlyUsedFirst_afterTheirLastConnection() {
    final PeerStore store = new PeerStore(1);
    store.connected(A);
    store.connected(A);
    store.addAddress(A, Multiaddr.parse("/ip4/127.0.0.1/tcp/1"));
    store.addAddress(B, Multiaddr.parse("/ip4/127.0.0.1/tcp/2"));
    store.addAddress(peer(3), Multiaddr.parse("/ip4/127.0.0.1/tcp/3"));
    // A has connections: kept although the store keeps one peer without a connection.
    assertThat(store.get(A)).isPresent();
    assertThat(store.get(B)).isEmpty();
    store.disconnected(A);
    assertThat(store.get(A)).isPresent();
    store.disconnected(A);
    // A's last connection closed: it is the most recently used peer without one.
    assertThat(store.get(A)).isPresent();
    assertThat(store.size()).isEqualTo(1);
  }

  @Test
  void peersWithoutAConnection_shouldStayWithinTheirHeapShare_whateverTheirIdentifySize() {
    // The attack: short-lived peers each identifying with 256 long protocol names.
    final PeerStore store = new PeerStore(10_000, 1 << 20);
    final List<String> protocols = new ArrayList<>();
    for (int i = 0; i < 256; i++) {
      protocols.add("/x/" + "p".repeat(24) + i);
    }
    for (int i = 0; i < 2_000; i++) {
      store.update(peer(i), null, null, protocols, "agent");
    }
    assertThat(store.recentBytes()).isLessThanOrEqualTo(1 << 20);
    assertThat(store.size()).isBetween(40, 100);
  }

  private static PeerId peer(final int n) {
    return PeerId.fromBytes(Multihash.sha2_256(Integer.toString(n).getBytes()).bytes());
  }
}
