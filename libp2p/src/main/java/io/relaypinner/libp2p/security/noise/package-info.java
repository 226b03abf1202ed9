/**
 * The libp2p Noise secure channel {@code /noise} (libp2p/specs noise/README.md r4 and
 * connections/inlined-muxer-negotiation.md r1; Noise Protocol Framework rev 34), byte-compatible
 * with js-libp2p-noise 16.x and 17.x.
 *
 * <p>Layers, bottom up: {@code CipherState}, {@code SymmetricState} and {@code HandshakeState} are
 * the Noise engine ({@code Noise_XX_25519_ChaChaPoly_SHA256}, no Netty types, checked against the
 * cacophony and snow vectors); {@code HandshakePayload} is the signed libp2p payload; {@link
 * io.relaypinner.libp2p.security.noise.NoiseHandshakeHandler} runs the handshake on a channel and
 * replaces itself with the {@link io.relaypinner.libp2p.security.noise.NoiseTransportCodec}; {@link
 * io.relaypinner.libp2p.security.noise.NoiseProtocol} binds the protocol id to handlers for one
 * identity.
 */
package io.relaypinner.libp2p.security.noise;
