package io.relaypinner.libp2p.protocol.identify;

import com.google.protobuf.ByteString;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.protocol.identify.pb.IdentifyProtos;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.PeerId;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Validates and merges the Identify messages read from one stream, the way js-libp2p 4.1.x does
 * ({@code mergeIdentifyMessages}): a scalar field present in a later message replaces the earlier
 * one, listen addresses and protocols are concatenated (we also drop duplicates). Every public
 * key received must be that of the connection's remote peer. No Netty.
 */
final class IdentifyAccumulator {
  private static final Logger LOG = LoggerFactory.getLogger(IdentifyAccumulator.class);

  private final PeerId remotePeer;
  private int messages;
  private PublicKey publicKey;
  private String protocolVersion;
  private String agentVersion;
  private boolean listenAddrsSent;
  private final Set<Multiaddr> listenAddrs = new LinkedHashSet<>();
  private int skippedListenAddrs;
  private Multiaddr observedAddr;
  private final Set<String> protocols = new LinkedHashSet<>();
  private byte[] signedPeerRecord;

  IdentifyAccumulator(final PeerId remotePeer) {
    this.remotePeer = remotePeer;
  }

  int messages() {
    return messages;
  }

  /**
   * Adds one message.
   *
   * @throws BadPeerException when its public key is malformed, unsupported or not the remote
   *     peer's
   */
  void add(final IdentifyProtos.Identify message) {
    if (message.hasPublicKey()) {
      publicKey = checkedKey(message.getPublicKey());
    }
    if (message.hasProtocolVersion()) {
      protocolVersion = message.getProtocolVersion();
    }
    if (message.hasAgentVersion()) {
      agentVersion = message.getAgentVersion();
    }
    for (final ByteString bytes : message.getListenAddrsList()) {
      listenAddrsSent = true;
      final Multiaddr addr = decode(bytes, "listen");
      if (addr == null) {
        skippedListenAddrs++;
      } else {
        listenAddrs.add(addr);
      }
    }
    if (message.hasObservedAddr()) {
      final Multiaddr addr = decode(message.getObservedAddr(), "observed");
      if (addr != null) {
        observedAddr = addr;
      }
    }
    protocols.addAll(message.getProtocolsList());
    if (message.hasSignedPeerRecord()) {
      signedPeerRecord = message.getSignedPeerRecord().toByteArray();
    }
    messages++;
  }

  /**
   * The merged result.
   *
   * @param requirePublicKey identify requires the key (js-libp2p refuses an identify without one);
   *     a push may leave it out
   * @throws ProtocolViolationException when no message was added, or the key is required and
   *     was never sent
   */
  IdentifyResult result(final boolean requirePublicKey) {
    if (messages == 0) {
      throw new ProtocolViolationException("stream ended before any Identify message");
    }
    if (requirePublicKey && publicKey == null) {
      throw new ProtocolViolationException("Identify message without a public key");
    }
    return new IdentifyResult(remotePeer, publicKey, protocolVersion, agentVersion,
        listenAddrsSent, new ArrayList<>(listenAddrs), skippedListenAddrs, observedAddr,
        new ArrayList<>(protocols), signedPeerRecord);
  }

  private PublicKey checkedKey(final ByteString bytes) {
    final PublicKey key;
    final PeerId keyPeer;
    try {
      key = Keys.unmarshalPublicKey(bytes.toByteArray());
      keyPeer = key.peerId();
    } catch (final IllegalArgumentException e) {
      // KeyFormatException and MultiformatException, and whatever a hostile point trips in the
      // curve code: all the remote's doing. RSA/ECDSA land here too; our secure channel cannot
      // authenticate such peers anyway.
      throw new BadPeerException("identify: unusable public key: " + e.getMessage(), e);
    }
    if (!keyPeer.equals(remotePeer)) {
      throw new BadPeerException(
          "identify: public key of " + keyPeer + " sent on a connection to " + remotePeer);
    }
    return key;
  }

  /** The address, or null when it is empty or does not decode (it must not fail the message). */
  private Multiaddr decode(final ByteString bytes, final String what) {
    if (bytes.isEmpty()) {
      return null;
    }
    try {
      return Multiaddr.fromBytes(bytes.toByteArray());
    } catch (final MultiformatException e) {
      LOG.debug("identify from {}: skipping {} address: {}", remotePeer, what, e.getMessage());
      return null;
    }
  }
}
