package io.relaypinner.multiformats;

import static io.relaypinner.multiformats.TestData.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MultiaddrTest {
  private static final String ED = "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA";
  private static final String QM = "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N";

  @Test
  void everyProtocol_shouldMatchProtocolsCsv_byCodeAndSize() {
    final Map<String, String[]> rows = new HashMap<>();
    for (final String line : TestData.lines("multiaddr/protocols.csv")) {
      final String[] f = line.split(",");
      if (f.length < 3 || f[0].trim().equals("code")) {
        continue;
      }
      rows.put(f[2].trim(), new String[] {f[0].trim(), f[1].trim()});
    }
    for (final MultiaddrProtocol p : MultiaddrProtocol.values()) {
      final String[] row = rows.get(p.protocolName());
      assertThat(row).as(p.protocolName()).isNotNull();
      assertThat(Integer.parseInt(row[0])).as(p.protocolName()).isEqualTo(p.code());
      final String size = p.isVariable() ? "V" : Integer.toString(p.sizeBits());
      assertThat(row[1]).as(p.protocolName()).isEqualTo(size);
      assertThat(MultiaddrProtocol.forCode(p.code())).contains(p);
      assertThat(MultiaddrProtocol.forName(p.protocolName())).contains(p);
    }
    assertThat(rows.get("ipfs")[0]).isEqualTo("421");
    assertThat(MultiaddrProtocol.forName("ipfs")).contains(MultiaddrProtocol.P2P);
    assertThat(MultiaddrProtocol.P2P.alias()).contains("ipfs");
  }

  @Test
  void featureScenarios_shouldMatchPackedAndStringForms() {
    final List<String> lines = TestData.lines("multiaddr/multiaddr.feature");
    int scenarios = 0;
    int componentRows = 0;
    Multiaddr ma = null;
    List<String> header = null;
    for (final String raw : lines) {
      final String line = raw.trim();
      if (line.startsWith("Scenario:")) {
        ma = null;
        header = null;
        scenarios++;
      } else if (line.startsWith("Given the multiaddr ")) {
        final String given = line.substring("Given the multiaddr ".length());
        ma = given.startsWith("0x") ? Multiaddr.fromBytes(hex(given)) : Multiaddr.parse(given);
      } else if (line.startsWith("Then the packed form is ")) {
        assertThat("0x" + hex(ma.bytes())).isEqualTo(line.substring(24));
      } else if (line.startsWith("Then the string form is ")) {
        assertThat(ma.toString()).isEqualTo(line.substring(24));
      } else if (line.startsWith("And the packed size is ")) {
        assertThat(ma.bytes().length + " bytes").isEqualTo(line.substring(23));
      } else if (line.startsWith("And the string size is ")) {
        assertThat(ma.toString().length() + " bytes").isEqualTo(line.substring(23));
      } else if (line.startsWith("|")) {
        final List<String> cells = new ArrayList<>();
        for (final String cell : line.substring(1, line.length() - 1).split("\\|", -1)) {
          cells.add(cell.trim());
        }
        if (header == null) {
          header = cells;
          continue;
        }
        final Map<String, String> row = new HashMap<>();
        for (int i = 0; i < header.size(); i++) {
          row.put(header.get(i), cells.get(i));
        }
        final MultiaddrComponent c = ma.components().get(componentRows % 2);
        assertThat(c.toString()).isEqualTo(row.get("string"));
        assertThat(c.toString().length()).isEqualTo(Integer.parseInt(row.get("stringSize")));
        assertThat("0x" + hex(c.bytes())).isEqualTo(row.get("packed"));
        assertThat(c.encodedLength()).isEqualTo(Integer.parseInt(row.get("packedSize")));
        assertThat(c.valueText()).isEqualTo(row.get("value"));
        assertThat(c.value().length).isEqualTo(Integer.parseInt(row.get("valueSize")));
        assertThat(c.protocol().protocolName()).isEqualTo(row.get("protocol"));
        assertThat(c.protocol().code()).isEqualTo(Integer.parseInt(row.get("codec")));
        assertThat("0x" + hex(Uvarint.encode(c.protocol().code()))).isEqualTo(row.get("uvarint"));
        assertThat(row.get("lengthPrefix")).isEmpty();
        assertThat("0x" + hex(c.value())).isEqualTo(row.get("rawValue"));
        componentRows++;
      }
    }
    assertThat(scenarios).isEqualTo(2);
    assertThat(componentRows).isEqualTo(4);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "/ip4/127.0.0.1/tcp/4001",
      "/ip4/0.0.0.0/udp/0/quic-v1",
      "/ip4/1.2.3.4/udp/4001/quic",
      "/ip6/::1/tcp/4001/ws",
      "/ip6/2001:db8::1:0:0:1/tcp/443/wss",
      "/ip6zone/eth0/ip6/fe80::1/tcp/1",
      "/dns/example.com/tcp/443/tls/sni/example.com/ws/p2p/" + ED,
      "/dns4/relay.example/tcp/443/tls/sni/relay.example/ws/p2p/" + ED,
      "/dns6/relay.example/tcp/443/wss/p2p/" + ED,
      "/dnsaddr/bootstrap.libp2p.io/p2p/" + QM,
      "/ip4/1.2.3.4/tcp/1/noise",
      "/ip4/1.2.3.4/tcp/80/http",
      "/ip4/1.2.3.4/tcp/443/https",
      "/ip4/1.2.3.4/udp/1/webrtc-direct/certhash/uEiB-PltkG7lShKsC5rn2lHJ9JzN_G8fYmj2af5eItR7Kzw",
      "/ip4/1.2.3.4/udp/1/quic-v1/webtransport/certhash/"
          + "uEiB-PltkG7lShKsC5rn2lHJ9JzN_G8fYmj2af5eItR7Kzw",
      "/p2p/" + ED + "/p2p-circuit/webrtc/p2p/" + QM,
      "/"
  })
  void textAndBinary_shouldRoundTrip_whenCanonical(final String text) {
    final Multiaddr ma = Multiaddr.parse(text);
    assertThat(ma.toString()).isEqualTo(text);
    final Multiaddr back = Multiaddr.fromBytes(ma.bytes());
    assertThat(back).isEqualTo(ma);
    assertThat(back.toString()).isEqualTo(text);
    assertThat(back.components()).isEqualTo(ma.components());
    assertThat(back.hashCode()).isEqualTo(ma.hashCode());
    assertThat(Multiaddr.of(ma.components())).isEqualTo(ma);
  }

  @Test
  void parse_shouldNormaliseAliasesAndForms() {
    assertThat(Multiaddr.parse("/ipfs/" + QM).toString()).isEqualTo("/p2p/" + QM);
    final PeerId id = PeerId.parse(ED);
    assertThat(Multiaddr.parse("/p2p/" + id.toCid()).toString()).isEqualTo("/p2p/" + ED);
    assertThat(Multiaddr.parse("/p2p/" + id.toBase36Cid()).toString()).isEqualTo("/p2p/" + ED);
    assertThat(Multiaddr.parse("/ip6/0:0:0:0:0:0:0:1/tcp/1").toString())
        .isEqualTo("/ip6/::1/tcp/1");
    assertThat(Multiaddr.parse("/ip6/ABCD::/tcp/1").toString()).isEqualTo("/ip6/abcd::/tcp/1");
    assertThat(Multiaddr.parse("/ip6/::ffff:1.2.3.4/tcp/1").toString())
        .isEqualTo("/ip6/::ffff:102:304/tcp/1");
    assertThat(Multiaddr.parse("/ip4/1.2.3.4/tcp/1/").toString()).isEqualTo("/ip4/1.2.3.4/tcp/1");
    final String b32 = Multibase.encode(Multibase.Base.BASE32,
        Multihash.sha2_256(new byte[] {1}).bytes());
    final Multiaddr cert = Multiaddr.parse("/certhash/" + b32);
    assertThat(cert.toString()).startsWith("/certhash/uEi");
    assertThat(Multiaddr.parse(cert.toString())).isEqualTo(cert);
  }

  @Test
  void ip6Printing_shouldFollowRfc5952() {
    final Map<String, String> cases = Map.of(
        "1:0:0:2:0:0:0:3", "1:0:0:2::3",
        "1:0:0:2:0:0:3:4", "1::2:0:0:3:4",
        "1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0",
        "0:2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8",
        "0:0:0:0:0:0:0:0", "::",
        "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1",
        "1::", "1::",
        "fe80::1:2", "fe80::1:2",
        "64:ff9b::192.0.2.33", "64:ff9b::c000:221");
    cases.forEach((in, out) ->
        assertThat(Multiaddr.parse("/ip6/" + in).toString()).as(in).isEqualTo("/ip6/" + out));
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.-4", "1..2.3", "a.b.c.d",
      "1.2.3.4 ", "", "1.2.3.0004", "１.2.3.4"})
  void parse_shouldRejectBadIpv4(final String ip) {
    assertThatThrownBy(() -> Multiaddr.parse("/ip4/" + ip + "/tcp/1"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("/ip4");
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "::g", "fe80::1%eth0",
      "1.2.3.4::", "1:2:3:4:5:6:7::1.2.3.4", ":1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::",
      "::1.2.3", "1:2:3:4:5:6:7:1.2.3.4"})
  void parse_shouldRejectBadIpv6(final String ip) {
    assertThatThrownBy(() -> Multiaddr.parse("/ip6/" + ip + "/tcp/1"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("/ip6");
  }

  @ParameterizedTest
  @ValueSource(strings = {"70000", "65536", "-1", "+1", "0443", "", "1e3", "4 4"})
  void parse_shouldRejectBadPort(final String port) {
    assertThatThrownBy(() -> Multiaddr.parse("/ip4/1.2.3.4/tcp/" + port))
        .isInstanceOf(MultiformatException.class);
  }

  @Test
  void parse_shouldNameTheProblem_withPosition() {
    assertThatThrownBy(() -> Multiaddr.parse("/ip4/1.2.3.4/tcp/70000"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("invalid /tcp value: invalid port '70000' (expected a decimal number 0-65535,"
            + " no leading zeros) at position 17");
    assertThatThrownBy(() -> Multiaddr.parse("/ip4/1.2.3.4/foo/1"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("unknown multiaddr protocol 'foo' at position 13");
    assertThatThrownBy(() -> Multiaddr.parse("/ip4/1.2.3.4/tcp"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("missing value for /tcp at position 16");
    assertThatThrownBy(() -> Multiaddr.parse("ip4/1.2.3.4"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("multiaddr text must start with '/'");
    assertThatThrownBy(() -> Multiaddr.parse(""))
        .isInstanceOf(MultiformatException.class);
    assertThatThrownBy(() -> Multiaddr.parse("/ip4//tcp/1"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("empty value for /ip4 at position 5");
    assertThatThrownBy(() -> Multiaddr.parse("/tls//"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("empty protocol name at position 5");
    assertThatThrownBy(() -> Multiaddr.parse("/tls//ws"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("empty protocol name at position 5");
    assertThatThrownBy(() -> Multiaddr.parse("/p2p/notapeer"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageStartingWith("invalid /p2p value:");
    assertThatThrownBy(() -> Multiaddr.parse("/certhash/uAAAA"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageStartingWith("invalid /certhash value:");
  }

  @Test
  void dnsNames_shouldBeNonEmptyBoundedAndSlashFree() {
    assertThat(Multiaddr.parse("/dns4/b\u00fccher.example/tcp/1").bytes()).hasSize(20);
    assertThatThrownBy(() -> Multiaddr.parse("/dns4/" + "a".repeat(256)))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("name of 256 bytes exceeds the limit of 255");
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("3600")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("empty name");
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("3603612f62")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("invalid /dns4 value: name contains '/' at position 1 at offset 0");
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("3602c328")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("not valid UTF-8");
    assertThatThrownBy(() -> Multiaddr.parse("/sni/a\u0007b"))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("U+0007");
  }

  @Test
  void fromBytes_shouldRejectUnknownCode_namingIt() {
    // 0x21 = dccp (33): a real protocol, but not one of ours.
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("04c000022a210001")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("unknown multiaddr protocol code 33 (0x21) at offset 5");
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("ffff03")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("unknown multiaddr protocol code 65535 (0xffff) at offset 0");
  }

  @Test
  void fromBytes_shouldRejectTruncatedValues() {
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("04c00002")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("truncated /ip4 value at offset 1: needs 4 bytes, 3 remain");
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("04c000022a0601")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("truncated /tcp value at offset 6: needs 2 bytes, 1 remain");
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("3605616263")))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("/dns4 at offset 0 declares a value of 5 bytes but 3 remain");
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("36")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("truncated varint at offset 1");
  }

  @Test
  void fromBytes_shouldRejectOversizedLengthAndTotal() {
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("36ffffffffffffffff7f61")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("declares a value of 9223372036854775807 bytes");
    assertThatThrownBy(() -> Multiaddr.fromBytes(new byte[Multiaddr.MAX_BYTES + 1]))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("multiaddr of 1025 bytes exceeds the limit of 1024");
    final List<MultiaddrComponent> many = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      many.add(MultiaddrComponent.of(MultiaddrProtocol.TCP, "1"));
    }
    assertThatThrownBy(() -> Multiaddr.of(many))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("longer than 1024 bytes");
    assertThatThrownBy(() -> Multiaddr.parse("/tls".repeat(1100)))
        .isInstanceOf(MultiformatException.class)
        .hasMessageContaining("exceeds the limit of 4096");
  }

  @Test
  void fromBytes_shouldRejectBadPeerIdAndCerthashValues() {
    final byte[] sha512 = Multihash.sha2_512(new byte[0]).bytes();
    final byte[] p2p = new byte[3 + sha512.length];
    p2p[0] = (byte) 0xa5;
    p2p[1] = 0x03;
    p2p[2] = (byte) sha512.length;
    System.arraycopy(sha512, 0, p2p, 3, sha512.length);
    assertThatThrownBy(() -> Multiaddr.fromBytes(p2p))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("invalid /p2p value: PeerId multihash must be identity or sha2-256, got"
            + " sha2-512 at offset 0");
    assertThatThrownBy(() -> Multiaddr.fromBytes(hex("d2030212ff")))
        .isInstanceOf(MultiformatException.class)
        .hasMessageStartingWith("invalid /certhash value:");
  }

  @Test
  void peerId_shouldBeLastP2p_andEncapsulationHelpersWork() {
    final PeerId relay = PeerId.parse(ED);
    final PeerId target = PeerId.parse(QM);
    final Multiaddr base = Multiaddr.parse("/dns4/relay.example/tcp/443/wss");
    final Multiaddr relayAddr = base.withPeerId(relay);
    assertThat(relayAddr.toString()).isEqualTo("/dns4/relay.example/tcp/443/wss/p2p/" + ED);
    assertThat(relayAddr.withPeerId(relay)).isSameAs(relayAddr);
    assertThatThrownBy(() -> relayAddr.withPeerId(target))
        .isInstanceOf(MultiformatException.class);
    final Multiaddr circuit = relayAddr.encapsulate("/p2p-circuit")
        .with(MultiaddrComponent.p2p(target));
    assertThat(circuit.peerId()).contains(target);
    assertThat(relayAddr.peerId()).contains(relay);
    assertThat(base.peerId()).isEmpty();
    assertThat(circuit.withoutPeerId().toString())
        .isEqualTo("/dns4/relay.example/tcp/443/wss/p2p/" + ED + "/p2p-circuit");
    assertThat(base.withoutPeerId()).isSameAs(base);
    assertThat(circuit.decapsulate(MultiaddrProtocol.P2P_CIRCUIT)).isEqualTo(relayAddr);
    assertThat(circuit.decapsulate(MultiaddrProtocol.P2P)).isEqualTo(
        relayAddr.encapsulate("/p2p-circuit"));
    assertThat(circuit.decapsulate(MultiaddrProtocol.IP4)).isSameAs(circuit);
    assertThat(circuit.decapsulate(Multiaddr.parse("/tcp/443"))).isEqualTo(
        Multiaddr.parse("/dns4/relay.example"));
    assertThatThrownBy(() -> circuit.decapsulate(Multiaddr.parse("/tcp/80")))
        .isInstanceOf(MultiformatException.class);
    assertThat(base.encapsulate(Multiaddr.EMPTY)).isEqualTo(base);
    assertThat(base.has(MultiaddrProtocol.WSS)).isTrue();
    assertThat(base.valueOf(MultiaddrProtocol.TCP)).contains("443");
    assertThat(base.first(MultiaddrProtocol.TCP).orElseThrow().port()).isEqualTo(443);
    assertThat(base.with(MultiaddrProtocol.SNI, "x.example").toString())
        .endsWith("/wss/sni/x.example");
    assertThat(Multiaddr.EMPTY.toString()).isEqualTo("/");
    assertThat(Multiaddr.parse("/")).isEqualTo(Multiaddr.EMPTY);
    assertThat(Multiaddr.EMPTY.isEmpty()).isTrue();
  }

  @Test
  void multiaddr_shouldBeImmutable_whenArraysChange() {
    final Multiaddr ma = Multiaddr.parse("/ip4/1.2.3.4/tcp/1");
    final byte[] bytes = ma.bytes();
    bytes[1] = 9;
    assertThat(ma.toString()).isEqualTo("/ip4/1.2.3.4/tcp/1");
    final byte[] input = hex("04c000022a0601bb");
    final Multiaddr fromBytes = Multiaddr.fromBytes(input);
    Arrays.fill(input, (byte) 0);
    assertThat(fromBytes.toString()).isEqualTo("/ip4/192.0.2.42/tcp/443");
    assertThatThrownBy(() -> ma.components().add(MultiaddrComponent.of(MultiaddrProtocol.WS)))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void component_shouldValidateSizes() {
    assertThatThrownBy(() -> new MultiaddrComponent(MultiaddrProtocol.IP4, new byte[3]))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("/ip4 value must be 4 bytes, got 3");
    assertThatThrownBy(() -> new MultiaddrComponent(MultiaddrProtocol.TLS, new byte[1]))
        .isInstanceOf(MultiformatException.class);
    assertThatThrownBy(() -> MultiaddrComponent.of(MultiaddrProtocol.TCP))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("/tcp needs a value");
    assertThatThrownBy(() -> MultiaddrComponent.of(MultiaddrProtocol.WS, "x"))
        .isInstanceOf(MultiformatException.class)
        .hasMessage("/ws takes no value");
  }
}
