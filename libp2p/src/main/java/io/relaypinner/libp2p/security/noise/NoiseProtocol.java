package io.relaypinner.libp2p.security.noise;

import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.PeerId;
import java.security.SecureRandom;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The libp2p Noise secure channel {@value #PROTOCOL_ID} (libp2p/specs noise/README.md r4, Noise
 * Protocol Framework rev 34, {@code Noise_XX_25519_ChaChaPoly_SHA256}): the binding of the protocol
 * id to handshake handlers for one local identity.
 *
 * <p>The Noise static key is generated once per instance (so per host), kept only in memory, and
 * its signed handshake payload is computed once: a handshake then costs two X25519 agreements and
 * no signature on our side. The spec allows this ("a single static keypair may be generated when
 * noise-libp2p is initialized"), and js-libp2p-noise does the same. Ephemeral keys are fresh for
 * every handshake.
 *
 * <p>Usage, after multistream-select agreed on {@value #PROTOCOL_ID} on a raw connection:
 *
 * <pre>{@code
 * NoiseHandshakeHandler noise = protocol.newInitiator(Optional.of(dialledPeerId));
 * noise.handshakeFuture().whenComplete((session, error) -> ...);
 * channel.pipeline().addLast("noise", noise);
 * }</pre>
 *
 * Immutable and thread-safe; one instance serves every connection of a host.
 */
public final class NoiseProtocol {
  /** The multistream-select protocol id. */
  public static final String PROTOCOL_ID = "/noise";

  private final NoiseConfig config;
  private final X25519KeyPair staticKey;
  private final Supplier<X25519KeyPair> ephemeralKeys;
  private final byte[] localPayload;
  private final PeerId localPeerId;

  /**
   * A Noise binding for {@code identity} with a fresh static key and a new {@link SecureRandom}.
   */
  public NoiseProtocol(final PrivateKey identity, final NoiseConfig config) {
    this(identity, config, new SecureRandom());
  }

  /** A Noise binding for {@code identity} with a fresh static key from {@code random}. */
  public NoiseProtocol(
      final PrivateKey identity, final NoiseConfig config, final SecureRandom random) {
    this(identity, config, X25519KeyPair.generate(random), () -> X25519KeyPair.generate(random));
  }

  /** Test seam: fixed static key and ephemeral key source. */
  NoiseProtocol(
      final PrivateKey identity,
      final NoiseConfig config,
      final X25519KeyPair staticKey,
      final Supplier<X25519KeyPair> ephemeralKeys) {
    Objects.requireNonNull(identity, "identity");
    this.config = Objects.requireNonNull(config, "config");
    this.staticKey = Objects.requireNonNull(staticKey, "staticKey");
    this.ephemeralKeys = Objects.requireNonNull(ephemeralKeys, "ephemeralKeys");
    this.localPayload =
        HandshakePayload.encode(identity, staticKey.publicKey(), config.streamMuxers());
    this.localPeerId = identity.publicKey().peerId();
  }

  public NoiseConfig config() {
    return config;
  }

  public PeerId localPeerId() {
    return localPeerId;
  }

  /**
   * A handler for the dialling side.
   *
   * @param expectedRemote the PeerId we dialled, when the address named one ({@code /p2p/<id>}); a
   *     remote that authenticates as anyone else fails the handshake with {@link
   *     UnexpectedPeerException} before we reveal our identity
   */
  public NoiseHandshakeHandler newInitiator(final Optional<PeerId> expectedRemote) {
    return newHandler(true, expectedRemote);
  }

  /** A handler for the listening side. */
  public NoiseHandshakeHandler newResponder() {
    return newHandler(false, Optional.empty());
  }

  /** A handler for the listening side that also insists on a particular remote. */
  public NoiseHandshakeHandler newResponder(final PeerId expectedRemote) {
    return newHandler(false, Optional.of(expectedRemote));
  }

  private NoiseHandshakeHandler newHandler(
      final boolean initiator, final Optional<PeerId> expectedRemote) {
    Objects.requireNonNull(expectedRemote, "expectedRemote");
    return new NoiseHandshakeHandler(
        new HandshakeState(initiator, new byte[0], staticKey, ephemeralKeys),
        localPayload,
        expectedRemote,
        config);
  }

  @Override
  public String toString() {
    return "NoiseProtocol[" + localPeerId + "]";
  }
}
