package io.relaypinner.libp2p.transport.ws;

import io.netty.handler.ssl.SslContext;
import java.util.Optional;

/**
 * Where a WebSocket listener gets its server certificate: asked once per accepted connection, so
 * a certificate that appears or is replaced is used by the next connection without a restart.
 * Empty means "no certificate now": the port then speaks plain WebSocket only. Must be fast and
 * must not block (it runs on an event loop).
 */
@FunctionalInterface
public interface ServerTlsSource {
  /** No certificate, ever: plain WebSocket only. */
  ServerTlsSource NONE = Optional::empty;

  /** The server context to use for a connection accepted now, if there is a certificate. */
  Optional<SslContext> current();
}
