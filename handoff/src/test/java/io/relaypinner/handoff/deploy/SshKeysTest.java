package io.relaypinner.handoff.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.handoff.guest.BootstrapLocator;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.security.SecureRandom;
import java.util.List;
import org.junit.jupiter.api.Test;

class SshKeysTest {
  @Test
  void withLocator_shouldBeFoundByGuest_whenKeyHadComment() {
    final EthPrivateKey owner = EthPrivateKey.generate(new SecureRandom());
    final String line = SshKeys.withLocator(
        "ssh-ed25519   AAAAC3NzaC1lZDI1NTE5AAAAIBexampleexampleexample  me@laptop",
        owner.address(), "6f1c2a9e-1b2c-4d5e-8f90-123456789abc");
    assertThat(line).isEqualTo("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBexampleexampleexample "
        + "aleph-bootstrap-config:" + owner.address() + ":6f1c2a9e-1b2c-4d5e-8f90-123456789abc");
    final BootstrapLocator locator = BootstrapLocator.parse(List.of(line)).orElseThrow();
    assertThat(locator.owner()).isEqualTo(owner.address());
    assertThat(locator.token()).isEqualTo("6f1c2a9e-1b2c-4d5e-8f90-123456789abc");
  }

  @Test
  void throwawayKey_shouldBeAnOpenSshEd25519Line_always() {
    final String key = SshKeys.throwawayKey();
    assertThat(key).startsWith("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI");
    assertThat(SshKeys.parsePublicKey(List.of(key))).isEqualTo(key);
  }

  @Test
  void parsePublicKey_shouldRefuse_whenPrivateKeyFile() {
    assertThatThrownBy(() -> SshKeys.parsePublicKey(List.of(
        "-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(".pub");
  }
}
