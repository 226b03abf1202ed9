package io.relaypinner.libp2p.security.noise;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.security.noise.NoiseTestSupport.TrackingAllocator;
import java.security.SecureRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class NoiseTransportCodecTest {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final TrackingAllocator alloc = new TrackingAllocator(true);

  @AfterEach
  void noLeaks() {
    alloc.assertAllReleased();
  }

  private static TransportCiphers[] handshake() {
    final HandshakeState i =
        new HandshakeState(
            true,
            new byte[0],
            X25519KeyPair.generate(RANDOM),
            () -> X25519KeyPair.generate(RANDOM));
    final HandshakeState r =
        new HandshakeState(
            false,
            new byte[0],
            X25519KeyPair.generate(RANDOM),
            () -> X25519KeyPair.generate(RANDOM));
    r.readMessage(i.writeMessage(new byte[0]));
    i.readMessage(r.writeMessage(new byte[0]));
    r.readMessage(i.writeMessage(new byte[0]));
    return new TransportCiphers[] {i.split(), r.split()};
  }

  @Test
  void write_shouldFailAndClose_whenSendNonceIsExhausted() {
    final TransportCiphers ciphers = handshake()[0];
    ciphers.send().setNonceForTest(-1L);
    final EmbeddedChannel channel =
        NoiseTestSupport.channel(alloc, new NoiseTransportCodec(ciphers, NoiseConfig.DEFAULT));
    final ChannelFuture write = channel.writeAndFlush(alloc.of(new byte[10]));
    assertThat(write.cause()).isExactlyInstanceOf(InternalErrorException.class);
    assertThat(channel.isOpen()).isFalse();
    channel.finishAndReleaseAll();
  }

  @Test
  void read_shouldPropagateAndClose_whenReceiveFailsOnOurSide() {
    final TransportCiphers[] pair = handshake();
    final byte[] message = pair[0].send().encryptWithAd(new byte[0], new byte[5]);
    pair[1].receive().setNonceForTest(-1L);
    final EmbeddedChannel channel =
        NoiseTestSupport.channel(alloc, new NoiseTransportCodec(pair[1], NoiseConfig.DEFAULT));
    assertThatThrownBy(() -> channel.writeInbound(alloc.of(NoiseTestSupport.frame(message))))
        .isExactlyInstanceOf(InternalErrorException.class);
    assertThat(channel.isOpen()).isFalse();
    channel.finishAndReleaseAll();
  }

  @Test
  void write_shouldPassEmptyBufferThrough_withoutSpendingANonce() {
    final TransportCiphers ciphers = handshake()[0];
    final EmbeddedChannel channel =
        NoiseTestSupport.channel(alloc, new NoiseTransportCodec(ciphers, NoiseConfig.DEFAULT));
    channel.writeOutbound(alloc.buffer(0));
    assertThat(NoiseTestSupport.drainOutbound(channel)).isEmpty();
    assertThat(ciphers.send().nonce()).isZero();
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void read_shouldAcceptEmptyMessage_andAdvanceNonce() {
    final TransportCiphers[] pair = handshake();
    final byte[] empty = pair[0].send().encryptWithAd(new byte[0], new byte[0]);
    final byte[] hello = pair[0].send().encryptWithAd(new byte[0], "hello".getBytes());
    final EmbeddedChannel channel =
        NoiseTestSupport.channel(alloc, new NoiseTransportCodec(pair[1], NoiseConfig.DEFAULT));
    channel.writeInbound(alloc.of(NoiseTestSupport.frame(empty)));
    assertThat(NoiseTestSupport.drainInbound(channel)).isEmpty();
    channel.writeInbound(alloc.of(NoiseTestSupport.frame(hello)));
    assertThat(new String(NoiseTestSupport.drainInbound(channel))).isEqualTo("hello");
    assertThat(pair[1].receive().nonce()).isEqualTo(2);
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }
}
