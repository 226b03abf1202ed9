package io.relaypinner.libp2p.security.noise;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.security.noise.NoiseTestSupport.TrackingAllocator;
import java.io.ByteArrayOutputStream;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Jazzer: the Noise transport as a remote drives it, in the real handlers on embedded channels.
 * The first byte picks one of three inputs:
 * <ul>
 *   <li>raw bytes to a responder's {@link NoiseHandshakeHandler} (what an anonymous dialler
 *       sends), cut into reads where the fuzzer says;</li>
 *   <li>a real handshake between our initiator and responder whose messages the fuzzer cuts,
 *       flips bits in and extends: untouched, both sides complete; touched, a side fails with a
 *       {@link BadPeerException} and closes, never with anything else;</li>
 *   <li>a {@link NoiseTransportCodec} fed valid encrypted messages (plaintexts from the fuzzer)
 *       mixed with raw bytes, in fuzzer-cut reads: what comes out is exactly the plaintexts of the
 *       valid messages before the first foreign byte (all of them when there is none), a failure
 *       is a {@link ProtocolViolationException} that closes the channel.</li>
 * </ul>
 * Every path must release every buffer it allocated.
 */
class NoiseTransportFuzzer {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final PrivateKey INITIATOR_ID = Keys.generate(KeyType.ED25519, RANDOM);
  private static final PrivateKey RESPONDER_ID = Keys.generate(KeyType.ED25519, RANDOM);
  private static final NoiseProtocol INITIATOR =
      new NoiseProtocol(INITIATOR_ID, NoiseConfig.DEFAULT, RANDOM);
  private static final NoiseProtocol RESPONDER =
      new NoiseProtocol(RESPONDER_ID, NoiseConfig.DEFAULT, RANDOM);
  private static final byte[] KEY_A = filled(32, 1);
  private static final byte[] KEY_B = filled(32, 2);

  @FuzzTest
  void transport(final FuzzedDataProvider data) throws Exception {
    final TrackingAllocator alloc = new TrackingAllocator(false);
    switch (data.consumeInt(0, 2)) {
      case 0 -> rawHandshake(alloc, data);
      case 1 -> tamperedHandshake(alloc, data);
      default -> transportFrames(alloc, data);
    }
    alloc.assertAllReleased();
  }

  private static void rawHandshake(final TrackingAllocator alloc, final FuzzedDataProvider data) {
    final NoiseHandshakeHandler responder = RESPONDER.newResponder();
    final EmbeddedChannel channel = NoiseTestSupport.channel(alloc, responder);
    try {
      for (final byte[] read : cut(data, data.consumeRemainingAsBytes())) {
        if (!channel.isOpen()) {
          break;
        }
        deliver(channel, alloc, read);
      }
      // Nobody can answer message 2 without our ephemeral key: never a session.
      expectFailedOrPending(responder.handshakeFuture(), channel);
    } finally {
      channel.finishAndReleaseAll();
    }
  }

  private static void tamperedHandshake(final TrackingAllocator alloc,
      final FuzzedDataProvider data) {
    final NoiseHandshakeHandler initiator = INITIATOR.newInitiator(
        Optional.of(RESPONDER_ID.publicKey().peerId()));
    final NoiseHandshakeHandler responder = RESPONDER.newResponder();
    final EmbeddedChannel responderChannel = NoiseTestSupport.channel(alloc, responder);
    final EmbeddedChannel initiatorChannel = NoiseTestSupport.channel(alloc, initiator);
    boolean tampered = false;
    try {
      // Messages 1, 2, 3 alternate direction; each may be changed on its way.
      for (int message = 0; message < 3; message++) {
        final EmbeddedChannel from = message % 2 == 0 ? initiatorChannel : responderChannel;
        final EmbeddedChannel to = message % 2 == 0 ? responderChannel : initiatorChannel;
        byte[] bytes = NoiseTestSupport.drainOutbound(from);
        if (bytes.length == 0 || !to.isOpen()) {
          break;
        }
        if (data.consumeBoolean()) {
          final byte[] changed = tamper(data, bytes);
          tampered |= !Arrays.equals(changed, bytes);
          bytes = changed;
        }
        for (final byte[] read : cut(data, bytes)) {
          if (!to.isOpen()) {
            break;
          }
          deliver(to, alloc, read);
        }
      }
      if (!tampered) {
        requireDone(initiator.handshakeFuture(), "initiator");
        requireDone(responder.handshakeFuture(), "responder");
      } else {
        expectFailedOrPending(responder.handshakeFuture(), responderChannel);
        expectFailedOrPending(initiator.handshakeFuture(), initiatorChannel);
      }
    } finally {
      initiatorChannel.finishAndReleaseAll();
      responderChannel.finishAndReleaseAll();
    }
  }

  private static void transportFrames(final TrackingAllocator alloc,
      final FuzzedDataProvider data) {
    final CipherState sender = CipherState.withKey(KEY_A);
    final NoiseTransportCodec codec = new NoiseTransportCodec(
        new TransportCiphers(CipherState.withKey(KEY_B), CipherState.withKey(KEY_A)),
        NoiseConfig.DEFAULT);
    final ByteArrayOutputStream wire = new ByteArrayOutputStream();
    final ByteArrayOutputStream expected = new ByteArrayOutputStream();
    boolean foreign = false;
    final int parts = data.consumeInt(0, 8);
    for (int i = 0; i < parts && data.remainingBytes() > 0; i++) {
      if (data.consumeBoolean()) {
        final byte[] plaintext = data.consumeBytes(data.consumeInt(0, 2_048));
        wire.writeBytes(NoiseTestSupport.frame(sender.encryptWithAd(new byte[0], plaintext)));
        if (!foreign) {
          expected.writeBytes(plaintext);
        }
      } else {
        final byte[] raw = data.consumeBytes(data.consumeInt(0, 64));
        foreign |= raw.length > 0;
        wire.writeBytes(raw);
      }
    }
    final EmbeddedChannel channel = NoiseTestSupport.channel(alloc, codec);
    final ByteArrayOutputStream received = new ByteArrayOutputStream();
    Throwable failure = null;
    try {
      for (final byte[] read : cut(data, wire.toByteArray())) {
        if (!channel.isOpen()) {
          break;
        }
        final Throwable refused = deliver(channel, alloc, read);
        failure = failure != null ? failure : refused;
        for (Object msg = channel.readInbound(); msg != null; msg = channel.readInbound()) {
          final ByteBuf buf = (ByteBuf) msg;
          try {
            received.writeBytes(ByteBufUtil.getBytes(buf));
          } finally {
            buf.release();
          }
        }
      }
      if (failure != null && channel.isOpen()) {
        throw new AssertionError("transport failed but the channel stays open", failure);
      }
      if (failure != null && !foreign) {
        throw new AssertionError("valid messages refused", failure);
      }
      final byte[] got = received.toByteArray();
      final byte[] want = expected.toByteArray();
      if (!foreign ? !Arrays.equals(got, want)
          : got.length > want.length || !Arrays.equals(got, Arrays.copyOf(want, got.length))) {
        throw new AssertionError("plaintext differs: got " + got.length + " bytes, expected "
            + (foreign ? "a prefix of " : "") + want.length);
      }
    } finally {
      channel.finishAndReleaseAll();
    }
  }

  /**
   * Writes one read; a {@link ProtocolViolationException} of the transport codec (bytes after the
   * handshake) is returned, anything else escapes.
   */
  private static Throwable deliver(final EmbeddedChannel channel, final TrackingAllocator alloc,
      final byte[] read) {
    try {
      channel.writeInbound(alloc.of(read));
      return null;
    } catch (final ProtocolViolationException e) {
      return e;
    } catch (final DecoderException e) {
      if (!(e.getCause() instanceof ProtocolViolationException)) {
        throw e;
      }
      return e.getCause();
    }
  }

  /** Flips a bit, truncates or appends, as the fuzzer chooses. */
  private static byte[] tamper(final FuzzedDataProvider data, final byte[] bytes) {
    return switch (data.consumeInt(0, 2)) {
      case 0 -> {
        final byte[] out = bytes.clone();
        out[data.consumeInt(0, out.length - 1)] ^= (byte) (1 << data.consumeInt(0, 7));
        yield out;
      }
      case 1 -> Arrays.copyOf(bytes, data.consumeInt(0, bytes.length));
      default -> {
        final byte[] extra = data.consumeBytes(data.consumeInt(0, 64));
        final byte[] out = Arrays.copyOf(bytes, bytes.length + extra.length);
        System.arraycopy(extra, 0, out, bytes.length, extra.length);
        yield out;
      }
    };
  }

  /** {@code bytes} cut into up to 8 reads at fuzzer-chosen points. */
  private static List<byte[]> cut(final FuzzedDataProvider data, final byte[] bytes) {
    final List<byte[]> out = new ArrayList<>();
    int offset = 0;
    final int cuts = data.consumeInt(0, 7);
    for (int i = 0; i < cuts && offset < bytes.length; i++) {
      final int length = data.consumeInt(1, bytes.length - offset);
      out.add(Arrays.copyOfRange(bytes, offset, offset + length));
      offset += length;
    }
    if (offset < bytes.length || out.isEmpty()) {
      out.add(Arrays.copyOfRange(bytes, offset, bytes.length));
    }
    return out;
  }

  private static void expectFailedOrPending(final CompletableFuture<SecureSession> future,
      final EmbeddedChannel channel) {
    if (!future.isDone()) {
      return;
    }
    if (!future.isCompletedExceptionally()) {
      // A tampered handshake can only complete when the change did not matter (bytes after
      // message 3 belong to the transport, a flip in the unused part of nothing): allowed.
      return;
    }
    final Throwable cause = causeOf(future);
    if (!(cause instanceof BadPeerException) || cause.getMessage() == null) {
      throw new AssertionError("handshake failed with " + cause, cause);
    }
    if (channel.isOpen()) {
      throw new AssertionError("failed handshake left the channel open", cause);
    }
  }

  private static void requireDone(final CompletableFuture<SecureSession> future,
      final String side) {
    if (!future.isDone() || future.isCompletedExceptionally()) {
      throw new AssertionError("untouched handshake did not complete on the " + side + " side",
          future.isDone() ? causeOf(future) : null);
    }
  }

  private static Throwable causeOf(final CompletableFuture<SecureSession> future) {
    try {
      future.get();
      return null;
    } catch (final ExecutionException e) {
      return e.getCause();
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static byte[] filled(final int length, final int value) {
    final byte[] out = new byte[length];
    Arrays.fill(out, (byte) value);
    return out;
  }
}
