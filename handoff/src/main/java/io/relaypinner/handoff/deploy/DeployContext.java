package io.relaypinner.handoff.deploy;

import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.time.Clock;

/**
 * What every step of a deployment shares: the provider, the record store, the wallet (and a
 * signer for its records), the settings, the clock, the progress sink, the guest HTTP client and
 * the libp2p handshake.
 */
record DeployContext(HostProvider provider, RecordStore store, EthPrivateKey wallet,
    RecordSigner signer, DeployConfig config, Clock clock, DeployProgress progress,
    GuestHttpClient http, PeerHandshake handshake) {

  EthAddress owner() {
    return wallet.address();
  }

  /** Sleeps one poll interval of the record store. */
  void pause() throws InterruptedException {
    Thread.sleep(config.pollInterval().toMillis());
  }
}
