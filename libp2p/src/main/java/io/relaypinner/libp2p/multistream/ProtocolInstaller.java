package io.relaypinner.libp2p.multistream;

import io.netty.channel.Channel;

/**
 * Installs the handlers of the protocol a multistream-select 1.0 negotiation
 * ({@code multiformats/multistream-select}) agreed on.
 *
 * <p>Called once, on the channel's event loop, after the answer has been written and flushed and
 * before any byte that arrived behind the final message is passed on. Add the protocol's handlers
 * with {@code channel.pipeline().addLast(...)}: the negotiation handler is the last one in the
 * pipeline, removes itself right after this call, and hands the buffered bytes to whatever now
 * follows it. A thrown exception closes the channel.
 */
@FunctionalInterface
public interface ProtocolInstaller {
  /** Installs nothing: for a lazy initiator whose handlers are already in place. */
  ProtocolInstaller NONE = (channel, protocol) -> {};

  /** Installs the handlers for {@code protocol} on {@code channel}. */
  void install(Channel channel, String protocol) throws Exception;
}
