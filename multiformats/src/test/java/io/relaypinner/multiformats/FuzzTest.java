package io.relaypinner.multiformats;

import static io.relaypinner.multiformats.TestData.ascii;
import static io.relaypinner.multiformats.TestData.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.relaypinner.multiformats.Multibase.Base;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Random and mutated inputs: every parser either returns or throws {@link MultiformatException},
 * and whatever it accepts is canonical (prints and encodes back to the same input).
 */
class FuzzTest {
  private static final long SEED = 20_240_601L;
  private static final int ITERATIONS = 4000;

  private static final List<byte[]> BINARY_SAMPLES = List.of(
      Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(ascii("a"))).bytes(),
      Cid.v0(Multihash.sha2_256(ascii("b"))).bytes(),
      Cid.v1(Multicodec.RAW, Multihash.identity(ascii("inline"))).bytes(),
      Multihash.sha2_512(ascii("c")).bytes(),
      PeerId.parse("12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA").bytes(),
      Multiaddr.parse("/ip4/192.0.2.42/tcp/443/p2p/"
          + "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA").bytes(),
      Multiaddr.parse("/dns4/relay.example/tcp/443/tls/sni/relay.example/ws").bytes(),
      Multiaddr.parse("/ip6/2001:db8::1/udp/1/quic-v1/webtransport/certhash/"
          + "uEiB-PltkG7lShKsC5rn2lHJ9JzN_G8fYmj2af5eItR7Kzw").bytes());

  private static final String TEXT_POOL =
      "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0OIl+/=-_.:%  \u00e9\u0000\uffff"
          + "\ud83d\ude80bfkzmuBFKQ";

  private static final List<String> ADDRESS_TOKENS = List.of(
      "ip4", "ip6", "tcp", "udp", "dns", "dns4", "dnsaddr", "sni", "tls", "ws", "wss", "p2p",
      "ipfs", "certhash", "quic-v1", "webtransport", "p2p-circuit", "webrtc-direct", "ip6zone",
      "http", "noise", "1.2.3.4", "::1", "fe80::", "0", "443", "65535", "65536", "example.com",
      "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA",
      "k51qzi5uqu5dhdmyb9bd18pypu2wp5lpv2xnskfmrqa4lb5knqryrotb05e7or",
      "uEiB-PltkG7lShKsC5rn2lHJ9JzN_G8fYmj2af5eItR7Kzw", "", "x", "%", "\u00fc");

  @Test
  void binaryParsers_shouldOnlyThrowMultiformatException_forRandomAndMutatedBytes() {
    final Random random = new Random(SEED);
    int accepted = 0;
    for (int i = 0; i < ITERATIONS; i++) {
      final byte[] input = randomBytes(random);
      accepted += check(input, "Cid.fromBytes", () -> {
        final Cid cid = Cid.fromBytes(input);
        assertThat(cid.bytes()).isEqualTo(input);
        assertThat(Cid.parse(cid.toString())).isEqualTo(cid);
        return cid;
      });
      check(input, "Cid.read", () -> {
        final Cid.Decoded d = Cid.read(input, 0, input.length);
        assertThat(Arrays.copyOf(input, d.length())).isEqualTo(d.cid().bytes());
        return d;
      });
      accepted += check(input, "Multiaddr.fromBytes", () -> {
        final Multiaddr ma = Multiaddr.fromBytes(input);
        assertThat(ma.bytes()).isEqualTo(input);
        assertThat(Multiaddr.parse(ma.toString())).isEqualTo(ma);
        return ma;
      });
      accepted += check(input, "Multihash.decode", () -> {
        final Multihash mh = Multihash.decode(input);
        assertThat(mh.bytes()).isEqualTo(input);
        return mh;
      });
      check(input, "PeerId.fromBytes", () -> {
        final PeerId id = PeerId.fromBytes(input);
        assertThat(PeerId.parse(id.toString())).isEqualTo(id);
        return id;
      });
      check(input, "Uvarint.decode", () -> {
        final Uvarint.Decoded d = Uvarint.decode(input);
        assertThat(Uvarint.encode(d.value())).isEqualTo(Arrays.copyOf(input, d.length()));
        return d;
      });
    }
    // The mutations keep enough inputs valid for the round-trip checks to mean something.
    assertThat(accepted).isGreaterThan(ITERATIONS / 10);
  }

  @Test
  void textParsers_shouldOnlyThrowMultiformatException_forRandomText() {
    final Random random = new Random(SEED + 1);
    int accepted = 0;
    for (int i = 0; i < ITERATIONS; i++) {
      final String text = randomText(random);
      accepted += check(text, "Multibase.decode", () -> {
        final byte[] data = Multibase.decode(text);
        final Base base = Multibase.baseOf(text);
        final String again = Multibase.encode(base, data);
        if (base == Base.BASE58BTC || base == Base.BASE64 || base == Base.BASE64URL) {
          assertThat(again).isEqualTo(text);
        } else {
          assertThat(again.toLowerCase(Locale.ROOT)).isEqualTo(text.toLowerCase(Locale.ROOT));
        }
        return data;
      });
      check(text, "Base58.decode", () -> Base58.encode(Base58.decode(text)));
      check(text, "Cid.parse", () -> Cid.parse(text));
      check(text, "PeerId.parse", () -> PeerId.parse(text));
      final String address = randomAddress(random);
      accepted += check(address, "Multiaddr.parse", () -> {
        final Multiaddr ma = Multiaddr.parse(address);
        assertThat(Multiaddr.fromBytes(ma.bytes())).isEqualTo(ma);
        assertThat(Multiaddr.parse(ma.toString())).isEqualTo(ma);
        return ma;
      });
    }
    assertThat(accepted).isGreaterThan(ITERATIONS / 20);
  }

  private static byte[] randomBytes(final Random random) {
    if (random.nextBoolean()) {
      final byte[] out = new byte[random.nextInt(80)];
      random.nextBytes(out);
      return out;
    }
    byte[] out = BINARY_SAMPLES.get(random.nextInt(BINARY_SAMPLES.size())).clone();
    switch (random.nextInt(5)) {
      case 0 -> out[random.nextInt(out.length)] = (byte) random.nextInt(256);
      case 1 -> out = Arrays.copyOf(out, random.nextInt(out.length + 1));
      case 2 -> {
        out = Arrays.copyOf(out, out.length + 1 + random.nextInt(4));
        out[out.length - 1] = (byte) random.nextInt(256);
      }
      case 3 -> out[random.nextInt(Math.min(3, out.length))] ^= (byte) (1 << random.nextInt(8));
      default -> {
        // unchanged: a valid sample
      }
    }
    return out;
  }

  private static String randomText(final Random random) {
    final StringBuilder sb = new StringBuilder();
    final int n = random.nextInt(70);
    for (int i = 0; i < n; i++) {
      sb.append(TEXT_POOL.charAt(random.nextInt(TEXT_POOL.length())));
    }
    if (random.nextInt(4) == 0 && sb.length() > 0) {
      // A valid encoding with one character changed.
      final byte[] data = new byte[random.nextInt(40)];
      random.nextBytes(data);
      final Base base = Base.values()[random.nextInt(Base.values().length)];
      final StringBuilder valid = new StringBuilder(Multibase.encode(base, data));
      valid.setCharAt(random.nextInt(valid.length()), sb.charAt(0));
      return valid.toString();
    }
    return sb.toString();
  }

  private static String randomAddress(final Random random) {
    final StringBuilder sb = new StringBuilder();
    final int n = random.nextInt(8);
    for (int i = 0; i < n; i++) {
      sb.append('/').append(ADDRESS_TOKENS.get(random.nextInt(ADDRESS_TOKENS.size())));
    }
    return random.nextInt(10) == 0 ? sb.toString() + "/" : sb.toString();
  }

  /** Runs one parser call; returns 1 when it accepted the input, 0 when it refused it. */
  private static int check(final Object input, final String what, final Supplier<?> call) {
    try {
      call.get();
      return 1;
    } catch (final MultiformatException e) {
      assertThat(e.getMessage()).as(what).isNotBlank();
      return 0;
    } catch (final RuntimeException | AssertionError e) {
      final String shown = input instanceof byte[] b ? hex(b) : String.valueOf(input);
      fail(what + " failed for input " + shown + ": " + e, e);
      return 0;
    }
  }
}
