package io.relaypinner.relay.hostile;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.ipfs.bitswap.BitswapProtocol;
import io.relaypinner.ipfs.bitswap.pb.BitswapProtos;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.pubsub.GossipsubProtocol;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.heads.HeadsExchangeProtocol;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * One hostile peer: the project's own libp2p host (Noise, yamux, multistream, identify), dialled
 * to the relay, then raw frames on the relay's protocols, one {@link Attack} per peer, a batch per
 * {@link #tick()}. When the relay resets a stream or closes the connection, the next tick opens
 * a new one (a new connection at most every 500 ms), so the pressure lasts as long as the run.
 */
final class HostilePeer implements AutoCloseable {
  /** What this peer does to the relay. */
  enum Attack {
    /** Subscribes and unsubscribes hundreds of random {@code /orbitdb/} topics per batch. */
    SUBSCRIPTIONS,
    /** PRUNEs for a thousand random topics per batch, with the longest backoff a varint holds. */
    PRUNES,
    /** Subscriptions and GRAFTs for 64 KiB topic names. */
    LONG_TOPICS,
    /** Length-prefixed random bytes, and lengths beyond the limit, on the pubsub stream. */
    GARBAGE_RPCS,
    /** Bitswap wantlists of a thousand random CIDs (want-block and want-have, send DONT_HAVE). */
    WANT_FLOOD,
    /** Garbage on the OrbitDB heads protocol of the honest databases and of random ones. */
    HEADS_GARBAGE,
    /** New streams (pubsub, bitswap, heads) opened and never used or closed. */
    STREAM_OPENS,
    /** Wants every honest block on bitswap and never reads the answers (window stays full). */
    SLOW_READER
  }

  private static final int LONG_TOPIC_BYTES = 64 * 1024;

  private final Attack attack;
  private final Host host;
  private final Multiaddr relay;
  private final Supplier<List<Cid>> honestBlocks;
  private final Supplier<List<String>> honestDatabases;
  private final Random random;
  private final AtomicLong frames;
  private final AtomicLong streams;
  private final AtomicLong redials;
  private volatile CompletableFuture<Connection> connection;
  private volatile long lastDial;
  private volatile Channel stream;
  private volatile CompletableFuture<?> opening = CompletableFuture.completedFuture(null);

  /**
   * @param honestBlocks the CIDs the honest peers wrote (the slow reader wants them)
   * @param honestDatabases the honest database addresses (the heads garbage goes to them)
   */
  HostilePeer(final Attack attack, final EventLoops loops, final Multiaddr relay,
      final Supplier<List<Cid>> honestBlocks, final Supplier<List<String>> honestDatabases,
      final long seed, final AtomicLong frames, final AtomicLong streams,
      final AtomicLong redials) throws Exception {
    this.attack = attack;
    this.relay = relay;
    this.honestBlocks = honestBlocks;
    this.honestDatabases = honestDatabases;
    this.random = new Random(seed);
    this.frames = frames;
    this.streams = streams;
    this.redials = redials;
    host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.builder().listenAddresses(List.of()).build(), loops, Clock.systemUTC());
    if (attack == Attack.SLOW_READER) {
      // The relay answers wants on its own stream to us: we accept it and never read it.
      host.protocols().register(BitswapProtocol.BITSWAP_1_2,
          (channel, protocol) -> {
            channel.config().setAutoRead(false);
            channel.pipeline().addLast(new Discard());
          });
    }
    host.start().get(10, TimeUnit.SECONDS);
    connection = host.dial(relay);
    lastDial = System.nanoTime();
  }

  Attack attack() {
    return attack;
  }

  /** One batch of the attack; never blocks (a stream still opening or not writable: skipped). */
  void tick() {
    final Connection open = connection();
    if (open == null) {
      return;
    }
    if (attack == Attack.STREAM_OPENS) {
      for (int i = 0; i < 8; i++) {
        open.newStream(List.of(pick(GossipsubProtocol.MESHSUB_1_1, BitswapProtocol.BITSWAP_1_2,
            HeadsExchangeProtocol.PREFIX + randomAddress())), (channel, protocol) ->
            channel.pipeline().addLast(new Discard()))
            .thenRun(streams::incrementAndGet);
      }
      return;
    }
    final Channel current = stream;
    if (current == null || !current.isActive()) {
      if (opening.isDone()) {
        opening = open.newStream(List.of(protocol()), (channel, protocol) -> {
          if (attack == Attack.SLOW_READER) {
            channel.config().setAutoRead(false);
          }
          channel.pipeline().addLast(new Discard());
        }).thenAccept(s -> {
          streams.incrementAndGet();
          stream = s.channel();
        });
      }
      return;
    }
    if (!current.isWritable()) {
      return;
    }
    current.writeAndFlush(batch(), current.voidPromise());
    frames.incrementAndGet();
  }

  private Connection connection() {
    final CompletableFuture<Connection> current = connection;
    if (!current.isDone()) {
      return null;
    }
    final Connection open = current.isCompletedExceptionally() ? null : current.join();
    if (open != null && open.isOpen()) {
      return open;
    }
    if (System.nanoTime() - lastDial > TimeUnit.MILLISECONDS.toNanos(500)) {
      lastDial = System.nanoTime();
      redials.incrementAndGet();
      stream = null;
      connection = host.dial(relay);
    }
    return null;
  }

  private String protocol() {
    return switch (attack) {
      case WANT_FLOOD, SLOW_READER -> BitswapProtocol.BITSWAP_1_2;
      case HEADS_GARBAGE -> HeadsExchangeProtocol.PREFIX + (random.nextBoolean()
          && !honestDatabases.get().isEmpty()
          ? pick(honestDatabases.get().toArray(String[]::new)) : randomAddress());
      default -> GossipsubProtocol.MESHSUB_1_1;
    };
  }

  private ByteBuf batch() {
    return switch (attack) {
      case SUBSCRIPTIONS -> {
        final PubsubProtos.RPC.Builder rpc = PubsubProtos.RPC.newBuilder();
        final boolean subscribe = random.nextInt(4) != 0;
        for (int i = 0; i < 500; i++) {
          rpc.addSubscriptions(PubsubProtos.RPC.SubOpts.newBuilder().setSubscribe(subscribe)
              .setTopic("/orbitdb/" + randomAddress().substring("/orbitdb/".length())));
        }
        yield framed(rpc.build().toByteArray());
      }
      case PRUNES -> {
        final PubsubProtos.ControlMessage.Builder control =
            PubsubProtos.ControlMessage.newBuilder();
        for (int i = 0; i < 1_000; i++) {
          control.addPrune(PubsubProtos.ControlPrune.newBuilder()
              .setTopicID("t" + random.nextLong()).setBackoff(Long.MAX_VALUE));
        }
        yield framed(PubsubProtos.RPC.newBuilder().setControl(control).build().toByteArray());
      }
      case LONG_TOPICS -> {
        final String topic = "/orbitdb/" + "x".repeat(LONG_TOPIC_BYTES) + random.nextInt();
        yield framed(PubsubProtos.RPC.newBuilder()
            .addSubscriptions(PubsubProtos.RPC.SubOpts.newBuilder().setSubscribe(true)
                .setTopic(topic))
            .setControl(PubsubProtos.ControlMessage.newBuilder()
                .addGraft(PubsubProtos.ControlGraft.newBuilder().setTopicID(topic)))
            .build().toByteArray());
      }
      case GARBAGE_RPCS, HEADS_GARBAGE -> {
        if (random.nextInt(8) == 0) {
          // A length prefix far beyond any limit, then nothing.
          yield Unpooled.wrappedBuffer(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x7f});
        }
        final byte[] garbage = new byte[1 + random.nextInt(16 * 1024)];
        random.nextBytes(garbage);
        yield random.nextBoolean() ? framed(garbage) : Unpooled.wrappedBuffer(garbage);
      }
      case WANT_FLOOD -> {
        final BitswapProtos.Message.Wantlist.Builder wants =
            BitswapProtos.Message.Wantlist.newBuilder().setFull(random.nextBoolean());
        for (int i = 0; i < 1_000; i++) {
          wants.addEntries(BitswapProtos.Message.Wantlist.Entry.newBuilder()
              .setBlock(ByteString.copyFrom(randomCid().bytes()))
              .setWantType(random.nextBoolean()
                  ? BitswapProtos.Message.Wantlist.WantType.Block
                  : BitswapProtos.Message.Wantlist.WantType.Have)
              .setSendDontHave(true).setPriority(random.nextInt()));
        }
        yield framed(BitswapProtos.Message.newBuilder().setWantlist(wants).build().toByteArray());
      }
      case SLOW_READER -> {
        final BitswapProtos.Message.Wantlist.Builder wants =
            BitswapProtos.Message.Wantlist.newBuilder().setFull(true);
        for (final Cid cid : honestBlocks.get()) {
          wants.addEntries(BitswapProtos.Message.Wantlist.Entry.newBuilder()
              .setBlock(ByteString.copyFrom(cid.bytes()))
              .setWantType(BitswapProtos.Message.Wantlist.WantType.Block));
        }
        yield framed(BitswapProtos.Message.newBuilder().setWantlist(wants).build().toByteArray());
      }
      case STREAM_OPENS -> Unpooled.EMPTY_BUFFER;
    };
  }

  private String pick(final String... values) {
    return values[random.nextInt(values.length)];
  }

  private Cid randomCid() {
    final byte[] bytes = new byte[16];
    random.nextBytes(bytes);
    return Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(bytes));
  }

  private String randomAddress() {
    return new OrbitDbAddress(randomCid()).toString();
  }

  private static ByteBuf framed(final byte[] message) {
    final ByteBuf out = Unpooled.buffer(message.length + 5);
    long length = message.length;
    while (length >= 0x80) {
      out.writeByte((int) (length & 0x7f) | 0x80);
      length >>>= 7;
    }
    out.writeByte((int) length);
    return out.writeBytes(message);
  }

  @Override
  public void close() {
    host.close();
  }

  /**
   * Drops whatever the relay sends on a stream we only write to, and closes it quietly when the
   * relay resets it (the next tick opens another).
   */
  private static final class Discard extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      ReferenceCountUtil.release(msg);
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      ctx.close();
    }
  }
}
