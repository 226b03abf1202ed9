package io.relaypinner.ipfs.bitswap;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Block;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Presence;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Want;
import io.relaypinner.ipfs.bitswap.BitswapFrame.WantType;
import io.relaypinner.ipfs.bitswap.pb.BitswapProtos.Message;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.libp2p.core.LimitExceededException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.Uvarint;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes and decodes bitswap message bodies (the protobuf after the varint length prefix, which
 * {@code UvarintFrameDecoder}/{@code UvarintFrameEncoder} handle), with hard limits.
 *
 * <p>Decoding rejects the whole message ({@link ProtocolViolationException}: the caller closes
 * the stream and counts it) when it is larger than {@code maxMessageSize}, is not a bitswap
 * protobuf, has more entries, blocks or presences than allowed, names an unparsable CID, or
 * carries a block over {@link Blocks#MAX_BLOCK_SIZE}. A single block whose bytes do not hash to
 * its prefix's CID (or whose hash function we cannot compute) is dropped and counted in
 * {@link Decoded#rejectedBlocks()}; the rest of the message stands. Blocks that come out are
 * verified: they may be stored as they are.
 *
 * <p>Stateless and thread-safe.
 */
public final class BitswapFrameCodec {
  private static final int SHA2_256_LENGTH = 32;
  private static final int SHA2_512_LENGTH = 64;

  private final BitswapConfig config;

  /** What {@link #decode} found. */
  public record Decoded(BitswapFrame frame, int rejectedBlocks) {}

  public BitswapFrameCodec(final BitswapConfig config) {
    this.config = config;
  }

  /**
   * Decodes one message body.
   *
   * @throws ProtocolViolationException when the message is malformed or over a limit
   */
  public Decoded decode(final ByteBuffer body) {
    if (body.remaining() > config.maxMessageSize()) {
      throw new LimitExceededException("bitswap message of " + body.remaining()
          + " bytes exceeds the limit of " + config.maxMessageSize());
    }
    final Message message;
    try {
      final CodedInputStream input = CodedInputStream.newInstance(body);
      input.setSizeLimit(config.maxMessageSize());
      input.setRecursionLimit(8);
      message = Message.parseFrom(input);
    } catch (final IOException e) {
      throw new ProtocolViolationException("bitswap: malformed message: " + e.getMessage());
    }
    final int entryCount = message.getWantlist().getEntriesCount();
    if (entryCount > config.maxWantlistEntries()) {
      throw new LimitExceededException("bitswap: " + entryCount
          + " wantlist entries exceed the limit of " + config.maxWantlistEntries());
    }
    final int blockCount = message.getBlocksCount() + message.getPayloadCount();
    if (blockCount > config.maxBlocksPerMessage()) {
      throw new LimitExceededException("bitswap: " + blockCount
          + " blocks exceed the limit of " + config.maxBlocksPerMessage());
    }
    if (message.getBlockPresencesCount() > config.maxPresencesPerMessage()) {
      throw new LimitExceededException("bitswap: " + message.getBlockPresencesCount()
          + " block presences exceed the limit of " + config.maxPresencesPerMessage());
    }
    final List<Want> wants = new ArrayList<>(entryCount);
    for (final Message.Wantlist.Entry entry : message.getWantlist().getEntriesList()) {
      final Cid cid = cid(entry.getBlock(), "wantlist entry");
      final WantType type = entry.getWantType() == Message.Wantlist.WantType.Have
          ? WantType.HAVE : WantType.BLOCK;
      wants.add(new Want(cid, entry.getPriority(), entry.getCancel(), type,
          entry.getSendDontHave()));
    }
    final List<Block> blocks = new ArrayList<>(blockCount);
    int rejected = 0;
    for (final ByteString data : message.getBlocksList()) {
      // 1.0.0: bare bytes, always CIDv0 (dag-pb, sha2-256).
      checkBlockSize(data);
      final byte[] bytes = data.toByteArray();
      blocks.add(new Block(Cid.v0(Multihash.sha2_256(bytes)), bytes));
    }
    for (final Message.Block payload : message.getPayloadList()) {
      checkBlockSize(payload.getData());
      final Prefix prefix = prefix(payload.getPrefix());
      final byte[] bytes = payload.getData().toByteArray();
      final Multihash hash = prefix.hash(bytes);
      if (hash == null) {
        rejected++;
        continue;
      }
      blocks.add(new Block(prefix.cid(hash), bytes));
    }
    final List<Presence> presences = new ArrayList<>(message.getBlockPresencesCount());
    for (final Message.BlockPresence presence : message.getBlockPresencesList()) {
      presences.add(new Presence(cid(presence.getCid(), "block presence"),
          presence.getType() == Message.BlockPresenceType.Have));
    }
    return new Decoded(new BitswapFrame(wants, message.getWantlist().getFull(), blocks,
        presences, message.getPendingBytes()), rejected);
  }

  /** Decodes one message body held in an array. */
  public Decoded decode(final byte[] body) {
    return decode(ByteBuffer.wrap(body));
  }

  /**
   * Encodes {@code frame} in the dialect of {@code version}: 1.0.0 peers get blocks as bare bytes
   * (only CIDv0 blocks; others are left out) and 1.0.0/1.1.0 peers get no presences and WANT-BLOCK
   * in place of WANT-HAVE.
   */
  public byte[] encode(final BitswapFrame frame, final BitswapProtocol.Version version) {
    final Message.Builder message = Message.newBuilder();
    if (!frame.wants().isEmpty() || frame.full()) {
      final Message.Wantlist.Builder wantlist = Message.Wantlist.newBuilder()
          .setFull(frame.full());
      for (final Want want : frame.wants()) {
        final Message.Wantlist.Entry.Builder entry = Message.Wantlist.Entry.newBuilder()
            .setBlock(ByteString.copyFrom(want.cid().bytes()))
            .setPriority(want.priority())
            .setCancel(want.cancel());
        if (version == BitswapProtocol.Version.V1_2) {
          entry.setWantType(want.type() == WantType.HAVE ? Message.Wantlist.WantType.Have
              : Message.Wantlist.WantType.Block).setSendDontHave(want.sendDontHave());
        }
        wantlist.addEntries(entry);
      }
      message.setWantlist(wantlist);
    }
    for (final Block block : frame.blocks()) {
      if (version == BitswapProtocol.Version.V1_0) {
        if (block.cid().version() == 0) {
          message.addBlocks(ByteString.copyFrom(block.data()));
        }
      } else {
        message.addPayload(Message.Block.newBuilder()
            .setPrefix(ByteString.copyFrom(prefixBytes(block.cid())))
            .setData(ByteString.copyFrom(block.data())));
      }
    }
    if (version == BitswapProtocol.Version.V1_2) {
      for (final Presence presence : frame.presences()) {
        message.addBlockPresences(Message.BlockPresence.newBuilder()
            .setCid(ByteString.copyFrom(presence.cid().bytes()))
            .setType(presence.have() ? Message.BlockPresenceType.Have
                : Message.BlockPresenceType.DontHave));
      }
      message.setPendingBytes(frame.pendingBytes());
    }
    return message.build().toByteArray();
  }

  /** Bytes a block adds to an encoded message, roughly (for batching). */
  public static int blockOverhead(final Cid cid) {
    return cid.encodedLength() + 16;
  }

  /** The CID prefix of the 1.1.0+ {@code Block}: version, codec, hash code, digest length. */
  public static byte[] prefixBytes(final Cid cid) {
    final long[] parts = {cid.version(), cid.codec(), cid.multihash().code(),
        cid.multihash().digestLength()};
    int size = 0;
    for (final long part : parts) {
      size += Uvarint.size(part);
    }
    final byte[] out = new byte[size];
    int pos = 0;
    for (final long part : parts) {
      pos += Uvarint.write(part, out, pos);
    }
    return out;
  }

  private static void checkBlockSize(final ByteString data) {
    if (data.size() > Blocks.MAX_BLOCK_SIZE) {
      throw new LimitExceededException("bitswap: block of " + data.size()
          + " bytes exceeds the limit of " + Blocks.MAX_BLOCK_SIZE);
    }
  }

  private static Cid cid(final ByteString bytes, final String what) {
    try {
      return Cid.fromBytes(bytes.toByteArray());
    } catch (final IllegalArgumentException e) {
      throw new ProtocolViolationException("bitswap: bad CID in " + what + ": "
          + e.getMessage());
    }
  }

  private record Prefix(long version, long codec, long hashFn, long digestLength) {
    /** The block's multihash under this prefix, or null when the hash cannot be computed. */
    Multihash hash(final byte[] data) {
      if (hashFn == Multicodec.SHA2_256.code() && digestLength == SHA2_256_LENGTH) {
        return Multihash.sha2_256(data);
      } else if (hashFn == Multicodec.SHA2_512.code() && digestLength == SHA2_512_LENGTH) {
        return Multihash.sha2_512(data);
      }
      return null;
    }

    Cid cid(final Multihash hash) {
      return version == 0 ? Cid.v0(hash) : Cid.v1((int) codec, hash);
    }
  }

  private static Prefix prefix(final ByteString bytes) {
    final byte[] raw = bytes.toByteArray();
    if (raw.length > 4 * Uvarint.MAX_BYTES) {
      throw new ProtocolViolationException("bitswap: block prefix too long");
    }
    try {
      int pos = 0;
      final long version = Uvarint.read(raw, pos, raw.length);
      pos += Uvarint.size(version);
      final long codec = Uvarint.read(raw, pos, raw.length);
      pos += Uvarint.size(codec);
      final long hashFn = Uvarint.read(raw, pos, raw.length);
      pos += Uvarint.size(hashFn);
      final long digestLength = Uvarint.read(raw, pos, raw.length);
      pos += Uvarint.size(digestLength);
      if (pos != raw.length) {
        throw new ProtocolViolationException("bitswap: trailing bytes after block prefix");
      }
      if (version > 1 || codec > Integer.MAX_VALUE
          || (version == 0 && (codec != Multicodec.DAG_PB.code()
              || hashFn != Multicodec.SHA2_256.code() || digestLength != SHA2_256_LENGTH))) {
        throw new ProtocolViolationException("bitswap: invalid block prefix (version " + version
            + ", codec 0x" + Long.toHexString(codec) + ")");
      }
      return new Prefix(version, codec, hashFn, digestLength);
    } catch (final MultiformatException e) {
      throw new ProtocolViolationException("bitswap: malformed block prefix: " + e.getMessage());
    }
  }
}
