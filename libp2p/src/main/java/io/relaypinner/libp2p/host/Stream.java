package io.relaypinner.libp2p.host;

import io.netty.channel.Channel;

/**
 * A negotiated libp2p stream: a yamux child {@link Channel} whose pipeline carries the protocol's
 * handlers, the protocol multistream-select chose, and the connection it runs on.
 */
public record Stream(Channel channel, String protocol, Connection connection) {}
