/**
 * Pubsub over gossipsub v1.1/v1.2 (libp2p/specs pubsub/README.md, pubsub/gossipsub/*), wire- and
 * id-compatible with js-libp2p's gossipsub under StrictSign.
 *
 * <p>Layers: {@link io.relaypinner.libp2p.pubsub.GossipsubProtocol} (binding: ids and stream
 * pipelines), {@code RpcInboundHandler} (Netty handler; our outbound stream uses
 * {@code netty.WriteOnlyStreamHandler}),
 * {@link io.relaypinner.libp2p.pubsub.GossipsubEngine} (router state, no Netty, fixed clock in
 * tests) and {@link io.relaypinner.libp2p.pubsub.PubSub} (the API).
 */
package io.relaypinner.libp2p.pubsub;
