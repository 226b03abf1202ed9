package io.relaypinner.relay.identity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.relay.config.InvalidConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeIdentityTest {
  private final SecureRandom random = new SecureRandom();

  @Test
  void load_shouldCreateEd25519KeyOnce_andKeepThePeerIdAcrossRestarts(@TempDir final Path dir) {
    final Path data = dir.resolve("relay-data");
    final NodeIdentity first = NodeIdentity.load(data, Optional.empty(), "libp2p.direct", random);
    assertThat(first.source()).isEqualTo(NodeIdentity.Source.CREATED);
    assertThat(first.privateKey().type()).isEqualTo(KeyType.ED25519);
    assertThat(first.peerId().toBase58()).startsWith("12D3KooW");
    assertThat(data.resolve(NodeIdentity.KEY_FILE)).exists();

    final NodeIdentity second = NodeIdentity.load(data, Optional.empty(), "libp2p.direct", random);
    assertThat(second.source()).isEqualTo(NodeIdentity.Source.STORED);
    assertThat(second.peerId()).isEqualTo(first.peerId());
  }

  @Test
  void load_shouldPreferRelayPrivKey_overTheStoredKey(@TempDir final Path dir) {
    NodeIdentity.load(dir, Optional.empty(), "libp2p.direct", random);
    final PrivateKey configured = Keys.generate(KeyType.SECP256K1, random);
    final NodeIdentity identity = NodeIdentity.load(
        dir, Optional.of(HexFormat.of().formatHex(configured.marshal())), "libp2p.direct", random);
    assertThat(identity.source()).isEqualTo(NodeIdentity.Source.ENVIRONMENT);
    assertThat(identity.peerId()).isEqualTo(configured.publicKey().peerId());
    assertThat(identity.peerId().toBase58()).startsWith("16Uiu2HA");
  }

  @Test
  void load_shouldNameRelayPrivKey_withoutEchoingIt_whenItIsNotAKey(@TempDir final Path dir) {
    final String secret = "0801124011";
    assertThatThrownBy(() -> NodeIdentity.load(dir, Optional.of(secret), "libp2p.direct", random))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageStartingWith("RELAY_PRIV_KEY: ")
        .hasMessageNotContaining(secret);
  }

  @Test
  void load_shouldRefuseACorruptKeyFile_andLeaveItInPlace(@TempDir final Path dir)
      throws Exception {
    Files.writeString(dir.resolve(NodeIdentity.KEY_FILE), "garbage");
    assertThatThrownBy(() -> NodeIdentity.load(dir, Optional.empty(), "libp2p.direct", random))
        .isInstanceOf(KeyFormatException.class);
    assertThat(Files.readString(dir.resolve(NodeIdentity.KEY_FILE))).isEqualTo("garbage");
  }

  @Test
  void servingZone_shouldBeTheBase36LibP2pKeyCidUnderTheDomain() {
    // Ed25519 key from seed 32 x 0x00; js-libp2p derives the same PeerId (KeysJsInteropIT)
    final PrivateKey key = Keys.unmarshalPrivateKeyHex("08011240" + "00".repeat(32)
        + "3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29");
    final String zone = NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct");
    assertThat(zone).startsWith("k51").endsWith(".libp2p.direct");
    assertThat(PeerId.parse(zone.substring(0, zone.indexOf('.'))))
        .isEqualTo(key.publicKey().peerId());
  }
}
