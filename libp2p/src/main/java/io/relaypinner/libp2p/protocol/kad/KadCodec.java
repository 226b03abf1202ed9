package io.relaypinner.libp2p.protocol.kad;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.protocol.kad.pb.KadProtos;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads and writes {@code /ipfs/kad/1.0.0} messages (kad.proto). Decoding walks the protobuf
 * fields itself instead of {@code Message.parseFrom}: a 1 MiB answer made of two-byte peers would
 * otherwise become half a million objects before any limit could be applied. Here at most
 * {@code maxPeers} peers per list and {@code maxAddresses} addresses per peer are built; the rest
 * is skipped unread, and so are peers with an invalid id and addresses we cannot parse (one bad
 * entry does not spoil the answer, as go-libp2p-kad-dht's {@code PBPeersToPeerInfos} does).
 * Stateless.
 */
public final class KadCodec {
  private static final int FIELD_TYPE = 1;
  private static final int FIELD_KEY = 2;
  private static final int FIELD_RECORD = 3;
  private static final int FIELD_CLOSER = 8;
  private static final int FIELD_PROVIDERS = 9;
  private static final int PEER_ID = 1;
  private static final int PEER_ADDRS = 2;

  /** The decoding bounds. */
  public record Limits(int maxKeyLength, int maxPeers, int maxAddresses) {
    public Limits {
      if (maxKeyLength < 1 || maxPeers < 0 || maxAddresses < 0) {
        throw new IllegalArgumentException("kad decode limits must be positive");
      }
    }
  }

  private KadCodec() {}

  /**
   * Decodes one message (without its length prefix).
   *
   * @throws ProtocolViolationException for bytes that are not a message or a key over the limit
   */
  public static KadMessage decode(final byte[] bytes, final Limits limits) {
    try {
      final CodedInputStream in = CodedInputStream.newInstance(bytes);
      KadMessage.Type type = KadMessage.Type.PUT_VALUE;
      byte[] key = new byte[0];
      boolean record = false;
      final List<KadPeer> closer = new ArrayList<>();
      final List<KadPeer> providers = new ArrayList<>();
      while (true) {
        final int tag = in.readTag();
        if (tag == 0) {
          break;
        }
        final int field = WireFormat.getTagFieldNumber(tag);
        final int wire = WireFormat.getTagWireType(tag);
        if (field == FIELD_TYPE && wire == WireFormat.WIRETYPE_VARINT) {
          type = type(in.readEnum());
        } else if (field == FIELD_KEY && wire == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          final int length = in.readRawVarint32();
          if (length < 0 || length > limits.maxKeyLength()) {
            throw new ProtocolViolationException("kad key of " + length + " bytes exceeds "
                + limits.maxKeyLength());
          }
          key = in.readRawBytes(length);
        } else if (field == FIELD_RECORD && wire == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          record = true;
          in.skipField(tag);
        } else if ((field == FIELD_CLOSER || field == FIELD_PROVIDERS)
            && wire == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          final List<KadPeer> list = field == FIELD_CLOSER ? closer : providers;
          if (list.size() >= limits.maxPeers()) {
            in.skipField(tag);
          } else {
            final KadPeer peer = peer(in.readByteArray(), limits.maxAddresses());
            if (peer != null) {
              list.add(peer);
            }
          }
        } else if (!in.skipField(tag)) {
          break;
        }
      }
      return new KadMessage(type, key, closer, providers, record);
    } catch (final IOException e) {
      throw new ProtocolViolationException("malformed kad message: " + e.getMessage());
    }
  }

  private static KadMessage.Type type(final int number) {
    final KadMessage.Type[] types = KadMessage.Type.values();
    return number >= 0 && number < types.length - 1 ? types[number] : KadMessage.Type.UNKNOWN;
  }

  /** One {@code Peer}, or null when its id is not a peer id. */
  private static KadPeer peer(final byte[] bytes, final int maxAddresses) throws IOException {
    final CodedInputStream in = CodedInputStream.newInstance(bytes);
    byte[] id = null;
    final List<Multiaddr> addresses = new ArrayList<>();
    while (true) {
      final int tag = in.readTag();
      if (tag == 0) {
        break;
      }
      final int field = WireFormat.getTagFieldNumber(tag);
      final int wire = WireFormat.getTagWireType(tag);
      if (field == PEER_ID && wire == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
        id = in.readByteArray();
      } else if (field == PEER_ADDRS && wire == WireFormat.WIRETYPE_LENGTH_DELIMITED
          && addresses.size() < maxAddresses) {
        try {
          addresses.add(Multiaddr.fromBytes(in.readByteArray()).withoutPeerId());
        } catch (final MultiformatException e) {
          // Skipped: an address of a transport we do not know is no fault of the sender.
        }
      } else if (!in.skipField(tag)) {
        break;
      }
    }
    if (id == null) {
      return null;
    }
    try {
      return new KadPeer(PeerId.fromBytes(id), addresses);
    } catch (final MultiformatException e) {
      return null;
    }
  }

  /** Encodes {@code message} (without its length prefix). */
  public static KadProtos.Message toProto(final KadMessage message) {
    final KadProtos.Message.Builder out = KadProtos.Message.newBuilder()
        .setKey(ByteString.copyFrom(message.key()));
    if (message.type() != KadMessage.Type.UNKNOWN) {
      out.setTypeValue(message.type().ordinal());
    }
    for (final KadPeer peer : message.closerPeers()) {
      out.addCloserPeers(peer(peer));
    }
    for (final KadPeer peer : message.providerPeers()) {
      out.addProviderPeers(peer(peer));
    }
    return out.build();
  }

  /** Encodes {@code message} to bytes (without its length prefix). */
  public static byte[] encode(final KadMessage message) {
    return toProto(message).toByteArray();
  }

  private static KadProtos.Message.Peer peer(final KadPeer peer) {
    final KadProtos.Message.Peer.Builder out = KadProtos.Message.Peer.newBuilder()
        .setId(ByteString.copyFrom(peer.id().bytes()));
    for (final Multiaddr address : peer.addresses()) {
      out.addAddrs(ByteString.copyFrom(address.bytes()));
    }
    return out.build();
  }
}
