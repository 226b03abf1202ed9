package io.relaypinner.libp2p.protocol.identify;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.protocol.identify.pb.IdentifyProtos;
import io.relaypinner.multiformats.Multiaddr;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds our Identify message from {@link IdentifyLocal}, within the size limit. No Netty.
 *
 * <p>Trimming is deterministic: the key, versions and observed address always go in; then the
 * protocols in the host's order until the next one would not fit; then the listen addresses the
 * same way. Protocols come first because js-libp2p topologies (gossipsub, bitswap, relay) key on
 * them, while a peer that reached us already has one of our addresses.
 */
final class IdentifyMessageFactory {
  private static final Logger LOG = LoggerFactory.getLogger(IdentifyMessageFactory.class);

  private static final int LISTEN_ADDRS_FIELD = IdentifyProtos.Identify.LISTENADDRS_FIELD_NUMBER;
  private static final int PROTOCOLS_FIELD = IdentifyProtos.Identify.PROTOCOLS_FIELD_NUMBER;

  private final IdentifyLocal local;
  private final int maxMessageSize;
  private final ByteString publicKey;
  // Per factory (one per protocol instance), so a host with too many protocols logs once, not on
  // every connection.
  private final AtomicBoolean trimLogged = new AtomicBoolean();

  IdentifyMessageFactory(final IdentifyLocal local, final int maxMessageSize) {
    this.local = local;
    this.maxMessageSize = maxMessageSize;
    this.publicKey = ByteString.copyFrom(local.publicKey().marshal());
  }

  /**
   * Our Identify message.
   *
   * @param observedAddr the connection's remote address, or null to leave the field out (pushes,
   *     relayed connections)
   * @throws InternalErrorException when the host's suppliers fail or the fixed fields alone
   *     exceed the limit
   */
  IdentifyProtos.Identify build(final Multiaddr observedAddr) {
    final List<String> protocols;
    final List<Multiaddr> listenAddrs;
    try {
      protocols = List.copyOf(local.protocols());
      listenAddrs = List.copyOf(local.listenAddrs());
    } catch (final RuntimeException e) {
      // Includes a null element (List.copyOf): a host bug, never the remote's.
      throw new InternalErrorException("identify: the host's address or protocol supplier failed",
          e);
    }
    final IdentifyProtos.Identify.Builder b = IdentifyProtos.Identify.newBuilder()
        .setProtocolVersion(IdentifyProtocol.PROTOCOL_VERSION)
        .setAgentVersion(local.agentVersion())
        .setPublicKey(publicKey);
    if (observedAddr != null && !observedAddr.isEmpty()) {
      b.setObservedAddr(ByteString.copyFrom(observedAddr.bytes()));
    }
    int size = b.build().getSerializedSize();
    if (size > maxMessageSize) {
      throw new InternalErrorException(
          "identify: key, versions and observed address alone take " + size + " bytes, over "
              + maxMessageSize);
    }
    int droppedProtocols = 0;
    final Set<String> seenProtocols = new LinkedHashSet<>();
    for (final String protocol : protocols) {
      if (protocol.isEmpty() || !seenProtocols.add(protocol)) {
        continue;
      }
      final int fieldSize = CodedOutputStream.computeStringSize(PROTOCOLS_FIELD, protocol);
      if (droppedProtocols > 0 || size + fieldSize > maxMessageSize) {
        droppedProtocols++;
        continue;
      }
      b.addProtocols(protocol);
      size += fieldSize;
    }
    int droppedAddrs = 0;
    final Set<Multiaddr> seenAddrs = new LinkedHashSet<>();
    for (final Multiaddr addr : listenAddrs) {
      // js-libp2p sends listen addresses without the trailing /p2p/<self> (decapsulateCode);
      // only a trailing one is cut so relayed addresses keep their /p2p/<relay>.
      final Multiaddr bare = addr.withoutPeerId();
      if (bare.isEmpty() || !seenAddrs.add(bare)) {
        continue;
      }
      final ByteString bytes = ByteString.copyFrom(bare.bytes());
      final int fieldSize = CodedOutputStream.computeBytesSize(LISTEN_ADDRS_FIELD, bytes);
      if (droppedAddrs > 0 || size + fieldSize > maxMessageSize) {
        droppedAddrs++;
        continue;
      }
      b.addListenAddrs(bytes);
      size += fieldSize;
    }
    if ((droppedProtocols > 0 || droppedAddrs > 0) && trimLogged.compareAndSet(false, true)) {
      LOG.warn("identify message would exceed {} bytes: dropped the last {} protocols and the last"
              + " {} listen addresses (logged once; list the important protocols first and do"
              + " not advertise per-database protocols)",
          maxMessageSize, droppedProtocols, droppedAddrs);
    }
    return b.build();
  }
}
