/**
 * Yamux 1.0 ({@code /yamux/1.0.0}), the stream muxer on a secured libp2p connection: libp2p {@code
 * yamux/README.md}, a copy of hashicorp yamux {@code spec.md}; behaviour matched against
 * {@code @chainsafe/libp2p-yamux} 7.x (js-libp2p 2) and 8.x (js-libp2p 3).
 *
 * <p>Wiring, once the muxer is agreed (early muxer negotiation in Noise, or multistream-select):
 *
 * <pre>{@code
 * YamuxHandler yamux = YamuxHandler.forListener(YamuxConfig.DEFAULT, inboundStreamInitializer,
 *     connectionManagerListener);
 * connection.pipeline().addLast("yamux", yamux);      // adds its YamuxFrameCodec in front
 *
 * yamux.newStream(new ChannelInitializer<Channel>() { // any thread
 *   protected void initChannel(Channel stream) { stream.pipeline().addLast(multistreamDialer); }
 * });
 * }</pre>
 *
 * <p>Every stream is a {@link io.relaypinner.libp2p.mux.yamux.YamuxStreamChannel}: a Netty child
 * channel ({@link io.netty.channel.socket.DuplexChannel}) on the connection's event loop that reads
 * and writes {@link io.netty.buffer.ByteBuf}s with yamux flow control behind them.
 */
package io.relaypinner.libp2p.mux.yamux;
