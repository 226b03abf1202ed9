package io.relaypinner.libp2p.security.noise;

/**
 * The two {@link CipherState}s a finished handshake yields, from one side's point of view: after
 * {@code Split()} the initiator sends with the first and the responder with the second
 * (js-libp2p-noise {@code performHandshake.ts}).
 */
record TransportCiphers(CipherState send, CipherState receive) {}
