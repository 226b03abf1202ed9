package io.relaypinner.libp2p.pubsub;

import io.relaypinner.multiformats.PeerId;

/**
 * A validated pubsub message delivered to the application (libp2p/specs pubsub/README.md).
 *
 * @param topic the topic it was published on
 * @param author the signing author ({@code from})
 * @param receivedFrom the peer that forwarded it to us
 * @param data the payload; callers must not modify it
 * @param id the message id, as JS computes it
 */
public record ReceivedMessage(String topic, PeerId author, PeerId receivedFrom, byte[] data,
    MessageId id) {}
