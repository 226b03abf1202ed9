package io.relaypinner.libp2p.security.noise;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.security.noise.NoiseTestSupport.TrackingAllocator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The handshake and transport between two real event loops over Netty's in-JVM transport. */
class NoiseLocalChannelTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int SIZE = 200 * 1024;

  /** Collects plaintext until {@code expected} bytes arrived, and the session event. */
  private static final class Collector extends ChannelInboundHandlerAdapter {
    final CompletableFuture<byte[]> bytes = new CompletableFuture<>();
    final CompletableFuture<SecureSession> event = new CompletableFuture<>();
    private final ByteArrayOutputStream received = new ByteArrayOutputStream();

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      final ByteBuf buf = (ByteBuf) msg;
      try {
        buf.readBytes(received, buf.readableBytes());
      } catch (final IOException e) {
        bytes.completeExceptionally(e);
      } finally {
        buf.release();
      }
      if (received.size() >= SIZE) {
        bytes.complete(received.toByteArray());
      }
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
      if (evt instanceof SecureSession session) {
        event.complete(session);
      }
      ctx.fireUserEventTriggered(evt);
    }
  }

  @Test
  void handshake_shouldAuthenticateAndCarryData_betweenRealEventLoops() throws Exception {
    final TrackingAllocator alloc = new TrackingAllocator(true);
    final PrivateKey serverKey = Keys.generate(KeyType.ED25519, RANDOM);
    final PrivateKey clientKey = Keys.generate(KeyType.SECP256K1, RANDOM);
    final NoiseProtocol serverNoise = new NoiseProtocol(serverKey, NoiseConfig.DEFAULT, RANDOM);
    final NoiseProtocol clientNoise = new NoiseProtocol(clientKey, NoiseConfig.DEFAULT, RANDOM);
    final CompletableFuture<SecureSession> serverSession = new CompletableFuture<>();
    final Collector serverCollector = new Collector();
    final Collector clientCollector = new Collector();
    final NoiseHandshakeHandler initiator =
        clientNoise.newInitiator(Optional.of(serverKey.publicKey().peerId()));
    final EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, LocalIoHandler.newFactory());
    try {
      final LocalAddress address = new LocalAddress("noise-" + UUID.randomUUID());
      final Channel server =
          new ServerBootstrap()
              .group(group)
              .channel(LocalServerChannel.class)
              .childOption(ChannelOption.ALLOCATOR, alloc)
              .childHandler(
                  new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(final LocalChannel ch) {
                      final NoiseHandshakeHandler responder = serverNoise.newResponder();
                      responder
                          .handshakeFuture()
                          .whenComplete(
                              (session, error) -> {
                                if (error != null) {
                                  serverSession.completeExceptionally(error);
                                } else {
                                  serverSession.complete(session);
                                  // Echo: what the client sends comes back once it is all here.
                                  serverCollector.bytes.thenAccept(
                                      data ->
                                          ch.writeAndFlush(
                                              ch.alloc().buffer(data.length).writeBytes(data)));
                                }
                              });
                      ch.pipeline().addLast("noise", responder).addLast(serverCollector);
                    }
                  })
              .bind(address)
              .sync()
              .channel();
      final Channel client =
          new Bootstrap()
              .group(group)
              .channel(LocalChannel.class)
              .option(ChannelOption.ALLOCATOR, alloc)
              .handler(
                  new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(final LocalChannel ch) {
                      ch.pipeline().addLast("noise", initiator).addLast(clientCollector);
                    }
                  })
              .connect(address)
              .sync()
              .channel();

      final SecureSession atClient = initiator.handshakeFuture().get(5, TimeUnit.SECONDS);
      final SecureSession atServer = serverSession.get(5, TimeUnit.SECONDS);
      assertThat(atClient.remotePeerId()).isEqualTo(serverKey.publicKey().peerId());
      assertThat(atServer.remotePeerId()).isEqualTo(clientKey.publicKey().peerId());
      assertThat(atClient.earlyMuxer()).contains(NoiseConfig.YAMUX);
      assertThat(clientCollector.event.get(5, TimeUnit.SECONDS)).isEqualTo(atClient);

      final byte[] data = new byte[SIZE];
      RANDOM.nextBytes(data);
      client.writeAndFlush(client.alloc().buffer(SIZE).writeBytes(data)).sync();
      assertThat(serverCollector.bytes.get(5, TimeUnit.SECONDS)).isEqualTo(data);
      assertThat(clientCollector.bytes.get(5, TimeUnit.SECONDS)).isEqualTo(data);

      client.close().sync();
      server.close().sync();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
    assertThat(alloc.allocated()).isPositive();
    alloc.assertAllReleased();
  }
}
