package io.relaypinner.handoff.deploy;

import io.relaypinner.multiformats.PeerId;
import java.io.IOException;

/**
 * Proves which libp2p peer answers at an address: the deployer dials it and completes a Noise
 * handshake, in which the remote signs its Noise static key with its libp2p identity key. The
 * PeerId returned is therefore the one whose private key the process listening there holds, not a
 * claim anyone could copy. The deployer signs an owner authorization only for a PeerId proven this
 * way at the address the provider allocated for the instance (docs/handoff.md "Trust model").
 */
public interface PeerHandshake {
  /**
   * Dials {@code ip}:{@code port} over TCP, completes a libp2p Noise handshake and closes the
   * connection.
   *
   * @return the PeerId the remote proved
   * @throws IOException when nothing answers, or the remote fails the handshake (no proof)
   */
  PeerId prove(String ip, int port) throws IOException, InterruptedException;
}
