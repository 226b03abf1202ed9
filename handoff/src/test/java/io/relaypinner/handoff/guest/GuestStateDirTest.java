package io.relaypinner.handoff.guest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Spec 2.9 for the publisher key: used when the guest has none in use, kept when it has. */
class GuestStateDirTest {
  private static final SecureRandom RANDOM = new SecureRandom();

  @TempDir
  Path dir;

  @Test
  void adoptPublisherKey_shouldUseTheSuppliedKey_whenTheGuestHasNoneInUse() throws Exception {
    final GuestStateDir state = GuestStateDir.open(dir, RANDOM);
    assertThat(state.publisherKeyInUse()).isFalse();
    final PublisherKey supplied = PublisherKey.generate(RANDOM);

    assertThat(state.adoptPublisherKey(Optional.of(supplied))).singleElement().asString()
        .contains("used", supplied.address()).doesNotContain(supplied.toHex().substring(2));

    assertThat(state.publisherKey().address()).isEqualTo(supplied.address());
    assertThat(state.publisherKeyInUse()).isTrue();
    assertThat(Files.readString(state.publisherKeyFile(), StandardCharsets.US_ASCII))
        .isEqualTo(supplied.toHex() + "\n");
    assertThat(GuestStateDir.open(dir, RANDOM).publisherKey().address())
        .isEqualTo(supplied.address());
  }

  @Test
  void adoptPublisherKey_shouldKeepTheKeyInUse_whenAnotherIsSuppliedLater() throws Exception {
    final GuestStateDir state = GuestStateDir.open(dir, RANDOM);
    final String own = state.publisherKey().address();
    assertThat(state.adoptPublisherKey(Optional.empty())).isEmpty();
    final String file = Files.readString(state.publisherKeyFile());

    // A reconfiguration (here: the same directory reopened, as after a reinstall).
    final GuestStateDir again = GuestStateDir.open(dir, RANDOM);
    assertThat(again.publisherKeyInUse()).isTrue();
    assertThat(again.adoptPublisherKey(Optional.of(PublisherKey.generate(RANDOM))))
        .singleElement().asString().contains("ignored", own);

    assertThat(again.publisherKey().address()).isEqualTo(own);
    assertThat(Files.readString(state.publisherKeyFile())).isEqualTo(file);
  }

  @Test
  void open_shouldKeepTheProvisionalKey_whenReopenedBeforeConfiguration() {
    final String first = GuestStateDir.open(dir, RANDOM).publisherKey().address();
    final GuestStateDir again = GuestStateDir.open(dir, RANDOM);
    assertThat(again.publisherKey().address()).isEqualTo(first);
    assertThat(again.publisherKeyInUse()).isFalse();
  }
}
