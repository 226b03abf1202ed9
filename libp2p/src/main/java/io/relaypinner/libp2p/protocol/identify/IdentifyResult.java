package io.relaypinner.libp2p.protocol.identify;

import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a peer told us over identify or identify-push (libp2p/specs identify/README.md), after
 * validation: the public key, when present, is that of {@link #peerId()}, the connection's
 * remote peer. Immutable.
 *
 * <p>From {@link IdentifyProtocol} the public key is always present. From {@link
 * IdentifyPushProtocol} the result is a partial update: apply it with {@link #updatedWith}.
 *
 * <p>Listen addresses that do not decode (an unknown multiaddr code, a truncated value) are
 * skipped and counted in {@link #skippedListenAddrs()}; an undecodable observed address is
 * absent. {@link #signedPeerRecord()} is kept as the opaque bytes received and is not verified.
 */
public final class IdentifyResult {
  private final PeerId peerId;
  private final PublicKey publicKey;
  private final String protocolVersion;
  private final String agentVersion;
  private final boolean listenAddrsSent;
  private final List<Multiaddr> listenAddrs;
  private final int skippedListenAddrs;
  private final Multiaddr observedAddr;
  private final List<String> protocols;
  private final byte[] signedPeerRecord;

  IdentifyResult(
      final PeerId peerId,
      final PublicKey publicKey,
      final String protocolVersion,
      final String agentVersion,
      final boolean listenAddrsSent,
      final List<Multiaddr> listenAddrs,
      final int skippedListenAddrs,
      final Multiaddr observedAddr,
      final List<String> protocols,
      final byte[] signedPeerRecord) {
    this.peerId = Objects.requireNonNull(peerId, "peerId");
    this.publicKey = publicKey;
    this.protocolVersion = protocolVersion;
    this.agentVersion = agentVersion;
    this.listenAddrsSent = listenAddrsSent;
    this.listenAddrs = List.copyOf(listenAddrs);
    this.skippedListenAddrs = skippedListenAddrs;
    this.observedAddr = observedAddr;
    this.protocols = List.copyOf(protocols);
    this.signedPeerRecord = signedPeerRecord == null ? null : signedPeerRecord.clone();
  }

  /** The connection's remote peer, whom this describes. */
  public PeerId peerId() {
    return peerId;
  }

  /** The peer's public key; always present after identify, optional in a push. */
  public Optional<PublicKey> publicKey() {
    return Optional.ofNullable(publicKey);
  }

  /** E.g. {@code ipfs/0.1.0}. */
  public Optional<String> protocolVersion() {
    return Optional.ofNullable(protocolVersion);
  }

  /** E.g. {@code js-libp2p/3.3.11 node/22.23.3}. */
  public Optional<String> agentVersion() {
    return Optional.ofNullable(agentVersion);
  }

  /** The decoded listen addresses, in the order received, without duplicates. */
  public List<Multiaddr> listenAddrs() {
    return listenAddrs;
  }

  /** How many received listen addresses were skipped because they did not decode or were empty. */
  public int skippedListenAddrs() {
    return skippedListenAddrs;
  }

  /** Our address as the peer sees it, when sent and decodable. */
  public Optional<Multiaddr> observedAddr() {
    return Optional.ofNullable(observedAddr);
  }

  /** The protocols the peer accepts streams for, in the order received, without duplicates. */
  public List<String> protocols() {
    return protocols;
  }

  /** Whether the peer lists {@code protocolId}. */
  public boolean supports(final String protocolId) {
    return protocols.contains(protocolId);
  }

  /** A copy of the signed peer record envelope as received (not verified). */
  public Optional<byte[]> signedPeerRecord() {
    return signedPeerRecord == null ? Optional.empty() : Optional.of(signedPeerRecord.clone());
  }

  /**
   * This result with a push applied, with js-libp2p's peer-store semantics
   * ({@code consumeIdentifyMessage}): a field the push carries replaces ours, a field it lacks
   * leaves ours untouched. The protocol and address lists are replaced as a whole when the push
   * carries at least one entry (an address list whose entries all failed to decode still
   * replaces ours, with no addresses).
   *
   * @throws IllegalArgumentException when the push is about another peer
   */
  public IdentifyResult updatedWith(final IdentifyResult push) {
    if (!push.peerId.equals(peerId)) {
      throw new IllegalArgumentException(
          "push from " + push.peerId + " cannot update identify of " + peerId);
    }
    return new IdentifyResult(
        peerId,
        push.publicKey != null ? push.publicKey : publicKey,
        push.protocolVersion != null ? push.protocolVersion : protocolVersion,
        push.agentVersion != null ? push.agentVersion : agentVersion,
        push.listenAddrsSent || listenAddrsSent,
        push.listenAddrsSent ? push.listenAddrs : listenAddrs,
        push.listenAddrsSent ? push.skippedListenAddrs : skippedListenAddrs,
        push.observedAddr != null ? push.observedAddr : observedAddr,
        push.protocols.isEmpty() ? protocols : push.protocols,
        push.signedPeerRecord != null ? push.signedPeerRecord : signedPeerRecord);
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof IdentifyResult other
        && peerId.equals(other.peerId)
        && Objects.equals(publicKey, other.publicKey)
        && Objects.equals(protocolVersion, other.protocolVersion)
        && Objects.equals(agentVersion, other.agentVersion)
        && listenAddrsSent == other.listenAddrsSent
        && listenAddrs.equals(other.listenAddrs)
        && skippedListenAddrs == other.skippedListenAddrs
        && Objects.equals(observedAddr, other.observedAddr)
        && protocols.equals(other.protocols)
        && Arrays.equals(signedPeerRecord, other.signedPeerRecord);
  }

  @Override
  public int hashCode() {
    return Objects.hash(peerId, agentVersion, listenAddrs, protocols);
  }

  @Override
  public String toString() {
    final List<String> addrs = new ArrayList<>(listenAddrs.size());
    listenAddrs.forEach(a -> addrs.add(a.toString()));
    return "IdentifyResult[peerId=" + peerId
        + ", publicKey=" + (publicKey == null ? "(absent)" : publicKey.type())
        + ", protocolVersion=" + protocolVersion
        + ", agentVersion=" + agentVersion
        + ", listenAddrs=" + addrs
        + (skippedListenAddrs > 0 ? ", skippedListenAddrs=" + skippedListenAddrs : "")
        + ", observedAddr=" + observedAddr
        + ", protocols=" + protocols
        + ", signedPeerRecord=" + (signedPeerRecord == null
            ? "(absent)" : signedPeerRecord.length + " bytes")
        + "]";
  }
}
