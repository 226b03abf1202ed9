package io.relaypinner.handoff.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DeployWalletTest {
  private static final String SOURCE =
      "0x0123456789012345678901234567890123456789012345678901234567890123";

  @TempDir
  Path dir;

  /** Vectors of notes/handoff.md 6.3 (the public executor's derivation). */
  @ParameterizedTest
  @CsvSource({
      "orbitdb-relay, 0xbc1b6d755fb648f77c9149b1d4581ce63d0201996528db7f7e160ba49f69ae0d, "
          + "0x5FD528ADF87F6399083773B3017de6D453B10E84",
      "uc-go-peer, 0x74c70c4e78d3348729412a5737dd6eadc04e0d70a5b6cf1892413267c6581293, "
          + "0x565394948614c245C307A279d2149d40569F0498"})
  void derivePublisherKey_shouldMatchPublicExecutor_whenSameWalletAndProfile(
      final String profile, final String key, final String address) {
    final EthPrivateKey derived =
        DeployWallet.derivePublisherKey(EthPrivateKey.parse(SOURCE), profile);
    assertThat(derived.toHex()).isEqualTo(key);
    assertThat(derived.address().toString()).isEqualTo(address);
  }

  @Test
  void load_shouldGenerateOwnerOnlyFileOnce_whenNoKeyGiven() throws Exception {
    final DeployWallet.Loaded first = DeployWallet.load(null, Map.of(), dir, new SecureRandom());
    final Path file = dir.resolve(DeployWallet.DEFAULT_FILE);
    assertThat(first.source()).isEqualTo(DeployWallet.Source.GENERATED);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
    final DeployWallet.Loaded second = DeployWallet.load(null, Map.of(), dir, new SecureRandom());
    assertThat(second.source()).isEqualTo(DeployWallet.Source.STORED);
    assertThat(second.key().address()).isEqualTo(first.key().address());
  }

  @Test
  void load_shouldPreferFileThenEnvironment_whenBothGiven() throws Exception {
    final Path file = dir.resolve("k");
    Files.writeString(file, SOURCE + "\n");
    final String other = "0x" + "11".repeat(32);
    assertThat(DeployWallet.load(file, Map.of(DeployWallet.ENV, other), dir,
        new SecureRandom()).key().toHex()).isEqualTo(SOURCE);
    assertThat(DeployWallet.load(null, Map.of(DeployWallet.ENV, other), dir,
        new SecureRandom()).key().toHex()).isEqualTo(other);
    assertThat(Files.exists(dir.resolve(DeployWallet.DEFAULT_FILE))).isFalse();
  }

  @Test
  void load_shouldNameSourceWithoutEchoingKey_whenMalformed() {
    final String bad = "0x" + "zz".repeat(32);
    assertThatThrownBy(() -> DeployWallet.load(null, Map.of(DeployWallet.ENV, bad), dir,
        new SecureRandom())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(DeployWallet.ENV).hasMessageNotContaining("zzzz");
  }
}
