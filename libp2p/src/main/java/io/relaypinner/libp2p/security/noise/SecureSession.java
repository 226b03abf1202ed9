package io.relaypinner.libp2p.security.noise;

import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.PeerId;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The outcome of a successful Noise handshake (libp2p/specs noise/README.md): who the remote is and
 * what it said about stream muxers (connections/inlined-muxer-negotiation.md).
 *
 * @param remotePeerId the PeerId derived from {@code remotePublicKey}
 * @param remotePublicKey the remote's libp2p identity key, whose signature over the remote's Noise
 *     static key was verified
 * @param remoteStreamMuxers the {@code stream_muxers} the remote sent, in its order; empty when it
 *     sent none (older peers), which means: negotiate the muxer with multistream-select
 * @param earlyMuxer the muxer both sides agreed on in the handshake, if both sent a non-empty list;
 *     when present, skip multistream-select and start this muxer directly
 * @param initiator whether this side was the Noise initiator (the dialer)
 */
public record SecureSession(
    PeerId remotePeerId,
    PublicKey remotePublicKey,
    List<String> remoteStreamMuxers,
    Optional<String> earlyMuxer,
    boolean initiator) {
  public SecureSession {
    Objects.requireNonNull(remotePeerId, "remotePeerId");
    Objects.requireNonNull(remotePublicKey, "remotePublicKey");
    remoteStreamMuxers = List.copyOf(remoteStreamMuxers);
    Objects.requireNonNull(earlyMuxer, "earlyMuxer");
  }
}
