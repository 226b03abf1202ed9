package io.relaypinner.libp2p.pubsub;

import io.netty.channel.Channel;
import io.relaypinner.libp2p.netty.UvarintFrameDecoder;
import io.relaypinner.libp2p.netty.UvarintFrameEncoder;
import io.relaypinner.libp2p.netty.WriteOnlyStreamHandler;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.RPC;
import java.util.List;
import java.util.function.Consumer;

/**
 * The gossipsub binding (libp2p/specs pubsub/gossipsub-v1.1.md, -v1.2.md): protocol ids and the
 * pipelines of the two stream directions. Each RPC is {@code uvarint(length) || RPC protobuf}.
 */
public final class GossipsubProtocol {
  /** Gossipsub v1.2 (adds IDONTWANT). */
  public static final String MESHSUB_1_2 = "/meshsub/1.2.0";
  /** Gossipsub v1.1. */
  public static final String MESHSUB_1_1 = "/meshsub/1.1.0";
  /** What we offer and answer, best first (JS offers the same two first). */
  public static final List<String> PROTOCOL_IDS = List.of(MESHSUB_1_2, MESHSUB_1_1);

  private GossipsubProtocol() {}

  /** A peer's stream to us: framed RPCs go to {@code sink}, on the stream's event loop. */
  static void installInbound(final Channel stream, final int maxRpcSize,
      final Consumer<RPC> sink) {
    stream.pipeline().addLast("gossipsub-frames", new UvarintFrameDecoder(maxRpcSize));
    stream.pipeline().addLast("gossipsub-rpc", new RpcInboundHandler(sink));
  }

  /** Our stream to a peer: write {@code ByteBuf}s of RPC protobufs; they get framed. */
  static void installOutbound(final Channel stream, final Consumer<Channel> writable,
      final Consumer<Channel> closed) {
    stream.pipeline().addLast("gossipsub-frame-encoder", UvarintFrameEncoder.INSTANCE);
    stream.pipeline().addLast("gossipsub-out", new WriteOnlyStreamHandler("gossipsub", writable,
        closed));
  }
}
