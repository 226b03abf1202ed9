package io.relaypinner.handoff.guest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.libp2p.crypto.KeyFormatException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PublisherKeyTest {
  @Test
  void address_shouldMatchKnownVector_whenKeyIsTheNotesExample() {
    // notes/handoff.md 6.3: this key's address (also what ethers gives for it).
    final PublisherKey key = PublisherKey.fromHex(
        "0x0123456789012345678901234567890123456789012345678901234567890123");
    assertThat(key.address()).isEqualTo("0x14791697260E4c9A71f18484C9f997B308e59325");
  }

  @Test
  void address_shouldMatchDerivedPublisherVector_whenKeyIsTheOrbitdbRelayExample() {
    final PublisherKey key = PublisherKey.fromHex(
        "bc1b6d755fb648f77c9149b1d4581ce63d0201996528db7f7e160ba49f69ae0d");
    assertThat(key.address()).isEqualTo("0x5FD528ADF87F6399083773B3017de6D453B10E84");
  }

  @Test
  void loadOrCreate_shouldKeepTheKey_whenCalledTwice(@TempDir final Path dir) throws Exception {
    final Path file = dir.resolve("publisher.key");
    final PublisherKey.Loaded first = PublisherKey.loadOrCreate(file, new SecureRandom());
    final PublisherKey.Loaded second = PublisherKey.loadOrCreate(file, new SecureRandom());
    assertThat(first.created()).isTrue();
    assertThat(second.created()).isFalse();
    assertThat(second.key().address()).isEqualTo(first.key().address());
    assertThat(Files.readString(file)).matches("0x[0-9a-f]{64}\n");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
  }

  @Test
  void loadOrCreate_shouldFailAndKeepTheFile_whenCorrupt(@TempDir final Path dir)
      throws Exception {
    final Path file = dir.resolve("publisher.key");
    Files.writeString(file, "not a key\n");
    assertThatThrownBy(() -> PublisherKey.loadOrCreate(file, new SecureRandom()))
        .isInstanceOf(KeyFormatException.class).hasMessageContaining("publisher key");
    assertThat(Files.readString(file)).isEqualTo("not a key\n");
  }
}
