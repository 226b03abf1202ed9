package io.relaypinner.relay.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.multiformats.Multiaddr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.naming.NameNotFoundException;
import org.junit.jupiter.api.Test;

class DnsAddrResolverTest {
  private static final String A = "QmNnooDu7bfjPFoTZYxMNLWUQJyrVwtbZg5gBMjTezGAJN";
  private static final String B = "QmQCU2EcMqAqQPR2i9bChDtGNJchTbq5TbXJJ16u19uLTa";

  private final Map<String, List<String>> records = new HashMap<>();
  private final List<String> asked = new ArrayList<>();
  private final DnsAddrResolver resolver = new DnsAddrResolver(name -> {
    asked.add(name);
    final List<String> found = records.get(name);
    if (found == null) {
      throw new NameNotFoundException(name);
    }
    return found;
  });

  private static List<Multiaddr> addrs(final String... texts) {
    return java.util.Arrays.stream(texts).map(Multiaddr::parse).toList();
  }

  @Test
  void resolve_shouldFollowNestedDnsAddrAndKeepThePeer_whenTxtRecordsName() {
    records.put("_dnsaddr.bootstrap.example", List.of(
        "\"dnsaddr=/dnsaddr/sv15.bootstrap.example/p2p/" + A + "\"",
        "dnsaddr=/dnsaddr/am6.bootstrap.example/p2p/" + B,
        "v=spf1 -all"));
    records.put("_dnsaddr.sv15.bootstrap.example", List.of(
        "dnsaddr=/ip4/198.51.100.1/tcp/4001/p2p/" + A,
        "dnsaddr=/ip6/2001:db8::1/tcp/4001/p2p/" + A,
        "dnsaddr=/ip4/198.51.100.1/tcp/4001",
        "dnsaddr=not a multiaddr"));
    records.put("_dnsaddr.am6.bootstrap.example", List.of(
        "dnsaddr=/ip4/198.51.100.2/tcp/4001/p2p/" + B));

    final List<Multiaddr> all = resolver.resolve(addrs("/dnsaddr/bootstrap.example",
        "/ip4/192.0.2.9/tcp/1/p2p/" + B));
    assertThat(all).containsExactlyElementsOf(addrs(
        "/ip4/198.51.100.1/tcp/4001/p2p/" + A, "/ip6/2001:db8::1/tcp/4001/p2p/" + A,
        "/ip4/198.51.100.2/tcp/4001/p2p/" + B, "/ip4/192.0.2.9/tcp/1/p2p/" + B));

    // With a /p2p suffix only that peer's entries are followed.
    asked.clear();
    assertThat(resolver.resolve(addrs("/dnsaddr/bootstrap.example/p2p/" + B)))
        .containsExactlyElementsOf(addrs("/ip4/198.51.100.2/tcp/4001/p2p/" + B));
    assertThat(asked).containsExactly("_dnsaddr.bootstrap.example",
        "_dnsaddr.am6.bootstrap.example");
  }

  @Test
  void resolve_shouldStopAtTheDepthLimit_whenRecordsLoop() {
    records.put("_dnsaddr.loop.example", List.of("dnsaddr=/dnsaddr/loop.example/p2p/" + A,
        "dnsaddr=/ip4/198.51.100.3/tcp/4001/p2p/" + A));
    assertThat(resolver.resolve(addrs("/dnsaddr/loop.example")))
        .containsExactlyElementsOf(addrs("/ip4/198.51.100.3/tcp/4001/p2p/" + A));
    assertThat(asked).hasSize(DnsAddrResolver.MAX_DEPTH);
  }

  @Test
  void resolve_shouldYieldNothingAndGoOn_whenTheLookupFails() {
    assertThat(resolver.resolve(addrs("/dnsaddr/missing.example",
        "/ip4/192.0.2.9/tcp/1/p2p/" + B)))
        .containsExactlyElementsOf(addrs("/ip4/192.0.2.9/tcp/1/p2p/" + B));
  }

  @Test
  void resolve_shouldBoundTheAddresses_whenARecordSetIsHuge() {
    final List<String> many = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      many.add("dnsaddr=/ip4/198.51.100.4/tcp/" + (1000 + i) + "/p2p/" + A);
    }
    records.put("_dnsaddr.big.example", many);
    assertThat(resolver.resolve(addrs("/dnsaddr/big.example")))
        .hasSize(DnsAddrResolver.MAX_ADDRESSES);
  }
}
