package io.relaypinner.libp2p.crypto;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one secret-file writer: owner-only, create-once or replace, no temporary file left. */
class SecretFileTest {
  @TempDir
  Path dir;

  @Test
  void createIfAbsent_shouldWriteOnceOwnerOnly_andLeaveAnExistingFileAlone() throws Exception {
    final Path file = dir.resolve("sub").resolve("secret.key");
    assertThat(SecretFile.createIfAbsent(file, bytes("first\n"))).isTrue();
    assertThat(SecretFile.createIfAbsent(file, bytes("second\n"))).isFalse();
    assertThat(Files.readString(file)).isEqualTo("first\n");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
    assertNoTemporaryFile();
  }

  @Test
  void replace_shouldSwapTheWholeContent_ownerOnly() throws Exception {
    final Path file = dir.resolve("relay.env");
    SecretFile.replace(file, bytes("A=1\n"));
    SecretFile.replace(file, bytes("B=2\n"));
    assertThat(Files.readString(file)).isEqualTo("B=2\n");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
    assertNoTemporaryFile();
  }

  private static byte[] bytes(final String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }

  private void assertNoTemporaryFile() throws Exception {
    try (Stream<Path> files = Files.walk(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp"));
    }
  }
}
