/**
 * libp2p's TLS 1.3 handshake (libp2p/specs tls/tls.md, r0): the self-signed certificate that
 * carries the host key in the libp2p Public Key Extension, and the verification of a remote's
 * certificate chain. Used by the QUIC transport ({@code io.relaypinner.libp2p.transport.quic}).
 */
package io.relaypinner.libp2p.security.tls;
