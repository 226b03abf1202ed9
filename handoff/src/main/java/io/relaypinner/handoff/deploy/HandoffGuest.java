package io.relaypinner.handoff.deploy;

import io.relaypinner.handoff.wallet.EthAddress;
import java.util.List;

/**
 * What a handoff learned about the guest.
 *
 * @param peerId the relay's PeerId
 * @param publisher the guest's bootstrap publisher address
 * @param multiaddrs the addresses the guest reported
 * @param proven whether a libp2p handshake at the instance's allocated address proved the PeerId
 *     already (pull); otherwise the relay verifier does it
 * @param authorized whether an owner authorization was signed for this guest
 */
record HandoffGuest(String peerId, EthAddress publisher, List<String> multiaddrs, boolean proven,
    boolean authorized) {
  HandoffGuest {
    multiaddrs = List.copyOf(multiaddrs);
  }
}
