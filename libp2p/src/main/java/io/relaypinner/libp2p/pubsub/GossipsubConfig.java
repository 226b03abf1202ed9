package io.relaypinner.libp2p.pubsub;

import java.time.Duration;

/**
 * Router parameters of gossipsub v1.1/v1.2 (libp2p/specs pubsub/gossipsub/gossipsub-v1.0.md
 * "Parameters", -v1.1.md "Overview of New Parameters") plus this node's resource limits. Defaults
 * follow the spec and js-libp2p-gossipsub's {@code constants.ts} except {@code dLo}, which is the
 * spec's 5 (JS uses 4).
 *
 * @param d desired mesh degree
 * @param dLo heartbeat grafts when the mesh is smaller
 * @param dHi heartbeat prunes down to {@code d} when the mesh is larger
 * @param dLazy peers that get IHAVE gossip per topic and heartbeat
 * @param heartbeatInterval mesh maintenance period
 * @param fanoutTtl a fanout topic we stopped publishing to is forgotten after this
 * @param mcacheLength heartbeats a message stays in the cache for IWANT
 * @param mcacheGossip most recent heartbeats whose ids go out in IHAVE
 * @param seenTtl how long a message id is remembered for de-duplication
 * @param pruneBackoff backoff we ask for and apply when a PRUNE gives none
 * @param unsubscribeBackoff backoff announced in the PRUNEs sent when we unsubscribe
 * @param maxMessageSize largest {@code data} we accept or publish
 * @param maxRpcSize largest length-prefixed RPC frame we read (JS reads up to 4 MiB)
 * @param maxTopicsPerPeer subscriptions we track per remote peer at most; more are ignored and
 *     the RPC is the peer's fault (default {@link #MAX_TOPICS_PER_PEER})
 * @param guaranteedTopicsPerPeer subscriptions every peer may hold whatever the others do;
 *     beyond them (up to {@code maxTopicsPerPeer}) a peer draws on the node-wide
 *     {@code maxSharedTopics}
 * @param maxSharedTopics subscriptions beyond {@code guaranteedTopicsPerPeer}, over all peers;
 *     when they are taken, further ones are ignored (counted {@code drop-topics-shared-full},
 *     not the peer's fault)
 * @param maxSubscriptionsPerRpc an RPC with more subscription changes has them all ignored
 *     (default {@link #MAX_SUBSCRIPTIONS_PER_RPC}, which is also what we send at most)
 * @param maxIHaveLength message ids we ask for per peer and heartbeat (IWANT), and the most ids
 *     in one IHAVE we send
 * @param maxIHaveMessages IHAVE messages we read per peer and heartbeat
 * @param maxIWantAnswers times one message is sent to one peer in answer to IWANT
 * @param maxIDontWant IDONTWANT ids we remember per peer
 * @param idontwantMinSize we send IDONTWANT only for messages at least this large (JS: 512)
 * @param maxMessagesPerPeerPerHeartbeat published messages accepted from one peer per heartbeat
 * @param maxQueuedBytesPerPeer outbound bytes buffered for a peer whose stream is not writable;
 *     beyond this, messages to it are dropped (control messages are kept)
 * @param floodPublish send our own messages to every subscribed peer, not only the mesh (JS)
 * @param allowPublishToZeroTopicPeers whether publishing with no subscribed peer succeeds
 * @param maxTopicLength longest topic name (UTF-8 bytes) we track or accept a message for
 *     (OrbitDB topics are under 100 bytes)
 * @param maxPruneBackoff longest backoff a peer's PRUNE can impose on us; longer ones are clamped
 * @param maxBackoffsPerPeer backoff entries kept per peer (the oldest goes first)
 * @param maxPendingValidations received messages waiting for their signature check; beyond
 *     this, new ones are dropped
 * @param maxMessageIdLength longest message id we read in IHAVE, IWANT and IDONTWANT (StrictSign
 *     ids, author and seqno, are under 50 bytes); longer ones are ignored
 * @param maxSeenEntries message ids the seen-cache holds at most; beyond, the oldest go before
 *     their {@code seenTtl} (a copy arriving later is delivered again)
 */
public record GossipsubConfig(
    int d, int dLo, int dHi, int dLazy, Duration heartbeatInterval, Duration fanoutTtl,
    int mcacheLength, int mcacheGossip, Duration seenTtl, Duration pruneBackoff,
    Duration unsubscribeBackoff, int maxMessageSize, int maxRpcSize, int maxTopicsPerPeer,
    int guaranteedTopicsPerPeer, int maxSharedTopics, int maxSubscriptionsPerRpc, int maxIHaveLength, int maxIHaveMessages, int maxIWantAnswers,
    int maxIDontWant, int idontwantMinSize, int maxMessagesPerPeerPerHeartbeat,
    long maxQueuedBytesPerPeer, boolean floodPublish, boolean allowPublishToZeroTopicPeers,
    int maxTopicLength, Duration maxPruneBackoff, int maxBackoffsPerPeer,
    int maxPendingValidations, int maxMessageIdLength, int maxSeenEntries) {

  /**
   * Subscription changes in one RPC: the most a relay-pinner accepts (the default of {@code
   * maxSubscriptionsPerRpc}) and the most it sends in one RPC, whatever its own config says, so
   * a relay following many databases is never dropped by another relay-pinner. JS gossipsub
   * (14.x, 15.x) reads any number ({@code decodeRpcLimits.maxSubscriptions} is unbounded).
   */
  public static final int MAX_SUBSCRIPTIONS_PER_RPC = 1_000;

  /**
   * Subscriptions tracked per peer: a relay-pinner follows up to 10,000 databases and announces
   * each one, so another relay-pinner must be able to hold them all.
   */
  public static final int MAX_TOPICS_PER_PEER = 10_000;

  public static final GossipsubConfig DEFAULT = builder().build();

  /** Validates. */
  public GossipsubConfig {
    if (dLo < 0 || d < dLo || dHi < d || d < 1) {
      throw new IllegalArgumentException("need 0 <= dLo <= d <= dHi and d >= 1: dLo=" + dLo
          + " d=" + d + " dHi=" + dHi);
    }
    if (dLazy < 0 || mcacheGossip < 1 || mcacheLength < mcacheGossip) {
      throw new IllegalArgumentException("need dLazy >= 0 and 1 <= mcacheGossip <= mcacheLength");
    }
    positive(heartbeatInterval, "heartbeatInterval");
    positive(fanoutTtl, "fanoutTtl");
    positive(seenTtl, "seenTtl");
    positive(pruneBackoff, "pruneBackoff");
    positive(unsubscribeBackoff, "unsubscribeBackoff");
    positive(maxPruneBackoff, "maxPruneBackoff");
    if (maxTopicLength < 1 || maxBackoffsPerPeer < 1 || maxPendingValidations < 1
        || maxMessageIdLength < 1 || maxSeenEntries < 1) {
      throw new IllegalArgumentException("maxTopicLength, maxBackoffsPerPeer,"
          + " maxPendingValidations, maxMessageIdLength and maxSeenEntries must be positive");
    }
    if (maxPruneBackoff.compareTo(pruneBackoff) < 0
        || maxPruneBackoff.compareTo(unsubscribeBackoff) < 0) {
      throw new IllegalArgumentException("maxPruneBackoff must be >= pruneBackoff and"
          + " unsubscribeBackoff");
    }
    if (maxMessageSize < 1 || maxRpcSize < maxMessageSize || maxTopicsPerPeer < 1
        || guaranteedTopicsPerPeer < 1 || maxSharedTopics < 0
        || maxSubscriptionsPerRpc < 1 || maxIHaveLength < 1 || maxIHaveMessages < 1
        || maxIWantAnswers < 1 || maxIDontWant < 0 || idontwantMinSize < 0
        || maxMessagesPerPeerPerHeartbeat < 1 || maxQueuedBytesPerPeer < maxRpcSize) {
      throw new IllegalArgumentException("limits must be positive, maxRpcSize >= maxMessageSize"
          + " and maxQueuedBytesPerPeer >= maxRpcSize");
    }
  }

  private static void positive(final Duration value, final String name) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from a copy of this config. */
  public Builder toBuilder() {
    final Builder b = new Builder();
    b.d = d;
    b.dLo = dLo;
    b.dHi = dHi;
    b.dLazy = dLazy;
    b.heartbeatInterval = heartbeatInterval;
    b.fanoutTtl = fanoutTtl;
    b.mcacheLength = mcacheLength;
    b.mcacheGossip = mcacheGossip;
    b.seenTtl = seenTtl;
    b.pruneBackoff = pruneBackoff;
    b.unsubscribeBackoff = unsubscribeBackoff;
    b.maxMessageSize = maxMessageSize;
    b.maxRpcSize = maxRpcSize;
    b.maxTopicsPerPeer = maxTopicsPerPeer;
    b.guaranteedTopicsPerPeer = guaranteedTopicsPerPeer;
    b.maxSharedTopics = maxSharedTopics;
    b.maxSubscriptionsPerRpc = maxSubscriptionsPerRpc;
    b.maxIHaveLength = maxIHaveLength;
    b.maxIHaveMessages = maxIHaveMessages;
    b.maxIWantAnswers = maxIWantAnswers;
    b.maxIDontWant = maxIDontWant;
    b.idontwantMinSize = idontwantMinSize;
    b.maxMessagesPerPeerPerHeartbeat = maxMessagesPerPeerPerHeartbeat;
    b.maxQueuedBytesPerPeer = maxQueuedBytesPerPeer;
    b.floodPublish = floodPublish;
    b.allowPublishToZeroTopicPeers = allowPublishToZeroTopicPeers;
    b.maxTopicLength = maxTopicLength;
    b.maxPruneBackoff = maxPruneBackoff;
    b.maxBackoffsPerPeer = maxBackoffsPerPeer;
    b.maxPendingValidations = maxPendingValidations;
    b.maxMessageIdLength = maxMessageIdLength;
    b.maxSeenEntries = maxSeenEntries;
    return b;
  }

  /** Builds a validated {@link GossipsubConfig}; starts at the defaults. */
  public static final class Builder {
    private int d = 6;
    private int dLo = 5;
    private int dHi = 12;
    private int dLazy = 6;
    private Duration heartbeatInterval = Duration.ofSeconds(1);
    private Duration fanoutTtl = Duration.ofSeconds(60);
    private int mcacheLength = 5;
    private int mcacheGossip = 3;
    private Duration seenTtl = Duration.ofMinutes(2);
    private Duration pruneBackoff = Duration.ofSeconds(60);
    private Duration unsubscribeBackoff = Duration.ofSeconds(10);
    private int maxMessageSize = 1 << 20;
    // JS frames RPCs with it-length-prefixed's 4 MiB default and answers a whole IWANT in one RPC.
    private int maxRpcSize = 4 << 20;
    private int maxTopicsPerPeer = MAX_TOPICS_PER_PEER;
    // Per peer 1,000 (what an honest browser or Node.js peer needs by far); a relay's beyond
    // that from a node-wide 20,000 (about 8 MiB of topic state), so peers cannot make the
    // tracked topics grow with the number of connections times 10,000.
    private int guaranteedTopicsPerPeer = 1_000;
    private int maxSharedTopics = 20_000;
    private int maxSubscriptionsPerRpc = MAX_SUBSCRIPTIONS_PER_RPC;
    private int maxIHaveLength = 5_000;
    private int maxIHaveMessages = 10;
    private int maxIWantAnswers = 3;
    private int maxIDontWant = 1_000;
    private int idontwantMinSize = 512;
    private int maxMessagesPerPeerPerHeartbeat = 1_000;
    private long maxQueuedBytesPerPeer = 16L << 20;
    private boolean floodPublish = true;
    private boolean allowPublishToZeroTopicPeers = true;
    private int maxTopicLength = 1024;
    private Duration maxPruneBackoff = Duration.ofMinutes(10);
    private int maxBackoffsPerPeer = 1_000;
    private int maxPendingValidations = 1_024;
    private int maxMessageIdLength = 256;
    private int maxSeenEntries = 262_144;

    private Builder() {}

    public Builder d(final int value) {
      d = value;
      return this;
    }

    public Builder dLo(final int value) {
      dLo = value;
      return this;
    }

    public Builder dHi(final int value) {
      dHi = value;
      return this;
    }

    public Builder dLazy(final int value) {
      dLazy = value;
      return this;
    }

    public Builder heartbeatInterval(final Duration value) {
      heartbeatInterval = value;
      return this;
    }

    public Builder fanoutTtl(final Duration value) {
      fanoutTtl = value;
      return this;
    }

    public Builder mcache(final int length, final int gossip) {
      mcacheLength = length;
      mcacheGossip = gossip;
      return this;
    }

    public Builder seenTtl(final Duration value) {
      seenTtl = value;
      return this;
    }

    public Builder pruneBackoff(final Duration value) {
      pruneBackoff = value;
      return this;
    }

    public Builder unsubscribeBackoff(final Duration value) {
      unsubscribeBackoff = value;
      return this;
    }

    public Builder maxMessageSize(final int value) {
      maxMessageSize = value;
      return this;
    }

    public Builder maxRpcSize(final int value) {
      maxRpcSize = value;
      return this;
    }

    public Builder maxTopicsPerPeer(final int value) {
      maxTopicsPerPeer = value;
      return this;
    }

    /** Default 1,000; the engine uses at most {@code maxTopicsPerPeer}. */
    public Builder guaranteedTopicsPerPeer(final int value) {
      guaranteedTopicsPerPeer = value;
      return this;
    }

    /** Default 20,000. */
    public Builder maxSharedTopics(final int value) {
      maxSharedTopics = value;
      return this;
    }

    public Builder maxSubscriptionsPerRpc(final int value) {
      maxSubscriptionsPerRpc = value;
      return this;
    }

    public Builder maxIHaveLength(final int value) {
      maxIHaveLength = value;
      return this;
    }

    public Builder maxIHaveMessages(final int value) {
      maxIHaveMessages = value;
      return this;
    }

    public Builder maxIWantAnswers(final int value) {
      maxIWantAnswers = value;
      return this;
    }

    public Builder maxIDontWant(final int value) {
      maxIDontWant = value;
      return this;
    }

    public Builder idontwantMinSize(final int value) {
      idontwantMinSize = value;
      return this;
    }

    public Builder maxMessagesPerPeerPerHeartbeat(final int value) {
      maxMessagesPerPeerPerHeartbeat = value;
      return this;
    }

    public Builder maxQueuedBytesPerPeer(final long value) {
      maxQueuedBytesPerPeer = value;
      return this;
    }

    public Builder floodPublish(final boolean value) {
      floodPublish = value;
      return this;
    }

    public Builder allowPublishToZeroTopicPeers(final boolean value) {
      allowPublishToZeroTopicPeers = value;
      return this;
    }

    public Builder maxTopicLength(final int value) {
      maxTopicLength = value;
      return this;
    }

    public Builder maxPruneBackoff(final Duration value) {
      maxPruneBackoff = value;
      return this;
    }

    public Builder maxBackoffsPerPeer(final int value) {
      maxBackoffsPerPeer = value;
      return this;
    }

    public Builder maxPendingValidations(final int value) {
      maxPendingValidations = value;
      return this;
    }

    /** Default 256 bytes. */
    public Builder maxMessageIdLength(final int value) {
      maxMessageIdLength = value;
      return this;
    }

    /** Default 262,144 (about 30 MiB of ids). */
    public Builder maxSeenEntries(final int value) {
      maxSeenEntries = value;
      return this;
    }

    public GossipsubConfig build() {
      return new GossipsubConfig(d, dLo, dHi, dLazy, heartbeatInterval, fanoutTtl, mcacheLength,
          mcacheGossip, seenTtl, pruneBackoff, unsubscribeBackoff, maxMessageSize, maxRpcSize,
          maxTopicsPerPeer, guaranteedTopicsPerPeer, maxSharedTopics, maxSubscriptionsPerRpc,
          maxIHaveLength, maxIHaveMessages,
          maxIWantAnswers, maxIDontWant, idontwantMinSize, maxMessagesPerPeerPerHeartbeat,
          maxQueuedBytesPerPeer, floodPublish, allowPublishToZeroTopicPeers, maxTopicLength,
          maxPruneBackoff, maxBackoffsPerPeer, maxPendingValidations, maxMessageIdLength,
          maxSeenEntries);
    }
  }
}
