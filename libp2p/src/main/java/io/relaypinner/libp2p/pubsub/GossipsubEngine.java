package io.relaypinner.libp2p.pubsub;

import com.google.protobuf.ByteString;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlGraft;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlIDontWant;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlIHave;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlIWant;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlMessage;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlPrune;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.Message;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.RPC;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gossipsub v1.1 router with v1.2 IDONTWANT (libp2p/specs pubsub/gossipsub/gossipsub-v1.0.md,
 * -v1.1.md, -v1.2.md) and the StrictSign policy, without peer scoring, peer exchange or direct
 * peers. No Netty and no threads: the caller serializes every call (one event loop), passes RPCs
 * in and gets RPCs out through {@link Output}; time comes from the given {@link Clock} and
 * randomness (mesh selection, seqno start) from the given {@link Random}, so tests are exact.
 *
 * <p>RPCs and events produced by one call are emitted when the outermost call returns; an
 * {@link Output} callback may call back into the engine (for example subscribe from a
 * subscription-change event).
 */
public final class GossipsubEngine {
  /** Where the engine's effects go. Called on the engine's thread. */
  public interface Output {
    /** Sends {@code rpc} on our outbound stream to {@code peer}. */
    void send(PeerId peer, RPC rpc);

    /** A new valid message on a topic we subscribe to. */
    default void deliver(final ReceivedMessage message) {}

    /** A peer announced a subscription change (not fired when a peer disconnects). */
    default void subscriptionChanged(final PeerId peer, final String topic,
        final boolean subscribed) {}

    /**
     * Offers the signature check of a received message that passed every cheap check, to run
     * elsewhere (it is the costly step). Return {@code true} to take it: then exactly one of
     * {@link #completeValidation} or {@link #abandonValidation} must follow later on the
     * engine's thread. The default returns {@code false}: the engine checks it at once.
     */
    default boolean validateLater(final PendingValidation pending) {
      return false;
    }
  }

  /** A received message waiting for its signature check (see {@link Output#validateLater}). */
  public static final class PendingValidation {
    private final PeerId from;
    private final Message message;
    private final MessageId claimedId;

    private PendingValidation(final PeerId from, final Message message,
        final MessageId claimedId) {
      this.from = from;
      this.message = message;
      this.claimedId = claimedId;
    }

    /** The message to check with {@link StrictSign#validate}. */
    public Message message() {
      return message;
    }
  }

  /** The outcome of {@link #publish}: the id and how many peers it was sent to. */
  public record PublishResult(MessageId id, int recipients) {}

  private static final class PeerState {
    private final PeerId id;
    private final Set<String> topics = new LinkedHashSet<>();
    /** Our outbound stream is open: only such peers are sent to or chosen for meshes. */
    private boolean connected;
    private boolean idontwant;
    /** Backoff expiry by topic, for this peer; at most maxBackoffsPerPeer, oldest first. */
    private final LinkedHashMap<String, Long> backoff = new LinkedHashMap<>();
    /** Ids the peer told us (IDONTWANT) not to send, with their expiry. */
    private final LinkedHashMap<MessageId, Long> dontSend = new LinkedHashMap<>();
    private int ihavesThisHeartbeat;
    private int idsAskedThisHeartbeat;
    private int messagesThisHeartbeat;

    private PeerState(final PeerId id) {
      this.id = id;
    }
  }

  private final PrivateKey identity;
  private final PeerId self;
  private final GossipsubConfig config;
  private final Clock clock;
  private final Random random;
  private final Output output;
  private final Map<PeerId, PeerState> peers = new LinkedHashMap<>();
  private final Map<String, Set<PeerId>> topicPeers = new HashMap<>();
  private final Set<String> subscriptions = new LinkedHashSet<>();
  private final Map<String, Set<PeerId>> mesh = new LinkedHashMap<>();
  private final Map<String, Set<PeerId>> fanout = new LinkedHashMap<>();
  private final Map<String, Long> fanoutLastPublished = new HashMap<>();
  private final LinkedHashMap<MessageId, Long> seen = new LinkedHashMap<>();
  /** Claimed ids of messages whose signature check runs; bounded by maxPendingValidations. */
  private final Set<MessageId> validating = new java.util.HashSet<>();
  /** Topics whose peers or mesh changed since {@link #takeChangedTopics}; for views. */
  private final Set<String> changedTopics = new LinkedHashSet<>();
  private final byte[] selfBytes;
  private final MessageCache mcache;
  private final Map<String, AtomicLong> counters = new ConcurrentHashMap<>();
  private final Map<PeerId, RPC.Builder> pendingControl = new LinkedHashMap<>();
  private final Map<PeerId, List<Message>> pendingMessages = new LinkedHashMap<>();
  private final Deque<Runnable> pendingEvents = new ArrayDeque<>();
  /** Peers' subscriptions beyond their guaranteed ones, over all peers (maxSharedTopics). */
  private int sharedTopics;
  /**
   * Where the shared topics are taken from as well ({@link io.relaypinner.common.budget.Resource#WORK},
   * one per topic: the node budget's pool scope), or null.
   */
  private final io.relaypinner.common.budget.Scope sharedPool;
  private long nextSeqno;
  private int depth;
  private long version;

  public GossipsubEngine(final PrivateKey identity, final GossipsubConfig config,
      final Clock clock, final Random random, final Output output) {
    this(identity, config, clock, random, output, null);
  }

  /**
   * @param sharedPool where each shared topic (beyond a peer's guaranteed ones) is also taken
   *     from, one {@link io.relaypinner.common.budget.Resource#WORK} each (the node budget's
   *     {@code gossipsub_topics} scope, whose refusals it counts), or null
   */
  public GossipsubEngine(final PrivateKey identity, final GossipsubConfig config,
      final Clock clock, final Random random, final Output output,
      final io.relaypinner.common.budget.Scope sharedPool) {
    this.sharedPool = sharedPool;
    this.identity = identity;
    this.self = identity.publicKey().peerId();
    this.selfBytes = self.bytes();
    this.config = config;
    this.clock = clock;
    this.random = random;
    this.output = output;
    this.mcache = new MessageCache(config.mcacheLength(), config.mcacheGossip());
    // A random start makes (key, seqno) unique across restarts, like JS 14's random seqnos.
    this.nextSeqno = random.nextLong();
  }

  public PeerId self() {
    return self;
  }

  public GossipsubConfig config() {
    return config;
  }

  // ---------------------------------------------------------------- peers

  /**
   * Our outbound stream to {@code peer} is open (again): the peer becomes eligible for meshes and
   * gets all our subscriptions first, as the spec asks of a new stream.
   *
   * @param idontwant whether the stream negotiated {@code /meshsub/1.2.0}
   */
  public void outboundOpened(final PeerId peer, final boolean idontwant) {
    enter();
    try {
      final PeerState state = peers.computeIfAbsent(peer, PeerState::new);
      state.connected = true;
      state.idontwant = idontwant;
      changedTopics.addAll(state.topics);
      if (!subscriptions.isEmpty()) {
        final RPC.Builder rpc = control(peer);
        for (final String topic : subscriptions) {
          rpc.addSubscriptions(sub(topic, true));
        }
      }
      // Its SUBSCRIBE may have come before this stream: graft it now, as on SUBSCRIBE.
      for (final String topic : state.topics) {
        graftOnSubscribe(peer, topic);
      }
      changed();
    } finally {
      exit();
    }
  }

  /** Our outbound stream to {@code peer} closed: nothing can be sent until it is reopened. */
  public void outboundClosed(final PeerId peer) {
    enter();
    try {
      final PeerState state = peers.get(peer);
      if (state != null) {
        state.connected = false;
        changedTopics.addAll(state.topics);
        removeFromMeshes(peer);
        pendingControl.remove(peer);
        pendingMessages.remove(peer);
        changed();
      }
    } finally {
      exit();
    }
  }

  /**
   * The peer is gone (no connection left): forget everything about it, its backoffs too (a
   * peer that comes back and GRAFTs at once is only refused by its own rules, not ours).
   */
  public void removePeer(final PeerId peer) {
    enter();
    try {
      final PeerState state = peers.remove(peer);
      if (state != null) {
        final int shared = Math.max(0, state.topics.size() - guaranteedTopics());
        sharedTopics -= shared;
        if (sharedPool != null) {
          sharedPool.release(io.relaypinner.common.budget.Resource.WORK, shared);
        }
        for (final String topic : state.topics) {
          removeTopicPeer(topic, peer);
          changedTopics.add(topic);
        }
        removeFromMeshes(peer);
        pendingControl.remove(peer);
        pendingMessages.remove(peer);
        changed();
      }
    } finally {
      exit();
    }
  }

  private void removeFromMeshes(final PeerId peer) {
    for (final Map.Entry<String, Set<PeerId>> entry : mesh.entrySet()) {
      if (entry.getValue().remove(peer)) {
        changedTopics.add(entry.getKey());
      }
    }
    for (final Set<PeerId> members : fanout.values()) {
      members.remove(peer);
    }
  }

  // ---------------------------------------------------------------- local API

  /** Joins {@code topic}: SUB to every peer, GRAFT to up to D subscribed peers not in backoff. */
  public void subscribe(final String topic) {
    enter();
    try {
      if (!subscriptions.add(topic)) {
        return;
      }
      for (final PeerState peer : peers.values()) {
        if (peer.connected) {
          control(peer.id).addSubscriptions(sub(topic, true));
        }
      }
      final Set<PeerId> members = new LinkedHashSet<>();
      final Set<PeerId> fromFanout = fanout.remove(topic);
      fanoutLastPublished.remove(topic);
      if (fromFanout != null) {
        for (final PeerId peer : fromFanout) {
          if (members.size() < config.d() && eligible(peer, topic)) {
            members.add(peer);
          }
        }
      }
      for (final PeerId peer : candidates(topic, members, config.d() - members.size())) {
        members.add(peer);
      }
      mesh.put(topic, members);
      for (final PeerId peer : members) {
        graft(peer, topic);
      }
      changed(topic);
    } finally {
      exit();
    }
  }

  /** Leaves {@code topic}: UNSUB to every peer, PRUNE (with the unsubscribe backoff) the mesh. */
  public void unsubscribe(final String topic) {
    enter();
    try {
      if (!subscriptions.remove(topic)) {
        return;
      }
      for (final PeerState peer : peers.values()) {
        if (peer.connected) {
          control(peer.id).addSubscriptions(sub(topic, false));
        }
      }
      final Set<PeerId> members = mesh.remove(topic);
      if (members != null) {
        for (final PeerId peer : members) {
          prune(peer, topic, config.unsubscribeBackoff().toMillis());
        }
      }
      changed(topic);
    } finally {
      exit();
    }
  }

  /**
   * Signs and sends our message: to every subscribed peer (flood publish, as JS), or to the mesh
   * or fanout without flood publish.
   *
   * @throws IllegalArgumentException when {@code data} exceeds the maximum message size
   * @throws IllegalStateException when no peer is subscribed and that is not allowed
   */
  public PublishResult publish(final String topic, final byte[] data) {
    if (data.length > config.maxMessageSize()) {
      throw new IllegalArgumentException("message of " + data.length
          + " bytes exceeds the limit of " + config.maxMessageSize());
    }
    enter();
    try {
      final long seqno = nextSeqno++;
      final Message message = StrictSign.sign(identity, topic, data, seqno);
      final MessageId id = StrictSign.messageId(identity.publicKey(),
          message.getSeqno().toByteArray());
      final Set<PeerId> targets = new LinkedHashSet<>();
      if (!subscriptions.contains(topic)) {
        fanoutLastPublished.put(topic, clock.millis());
        final Set<PeerId> members = fanout.computeIfAbsent(topic, t -> new LinkedHashSet<>());
        members.removeIf(peer -> !eligible(peer, topic));
        members.addAll(candidates(topic, members, config.d() - members.size()));
        targets.addAll(members);
      } else {
        targets.addAll(mesh.getOrDefault(topic, Set.of()));
      }
      if (config.floodPublish()) {
        for (final PeerId peer : topicPeers.getOrDefault(topic, Set.of())) {
          if (isConnected(peer)) {
            targets.add(peer);
          }
        }
      }
      if (targets.isEmpty() && !config.allowPublishToZeroTopicPeers()) {
        throw new IllegalStateException("no peer subscribed to " + topic);
      }
      markSeen(id);
      mcache.put(id, message);
      for (final PeerId peer : targets) {
        message(peer, message);
      }
      count("published");
      return new PublishResult(id, targets.size());
    } finally {
      exit();
    }
  }

  // ---------------------------------------------------------------- inbound RPC

  /**
   * Drops that only a peer breaking the bounds causes (an honest peer meets one at most in a
   * rare race, such as a PRUNE crossing our UNSUBSCRIBE): an RPC with any of them is the
   * sender's fault ({@link #handleRpc}).
   */
  static final Set<String> FAULTS = Set.of("drop-subscriptions-over-limit",
      "drop-topic-too-long", "drop-topics-over-limit", "drop-idontwant-over-limit",
      "drop-ihave-over-limit", "drop-iwant-over-limit", "drop-iwant-answers-over-limit",
      "drop-message-id-too-long", "drop-rate-limited", "drop-oversized", "prune-unknown-topic",
      "prune-backoff-clamped", "graft-unknown-topic");

  /**
   * Handles one RPC read from {@code from}'s stream.
   *
   * @return false when the RPC broke a bound ({@link #FAULTS}): the host adapter reports it as
   *     the peer's fault
   */
  public boolean handleRpc(final PeerId from, final RPC rpc) {
    enter();
    rpcFault = false;
    try {
      final PeerState peer = peers.computeIfAbsent(from, PeerState::new);
      count("rpc-received");
      final List<String> subscribed = handleSubscriptions(peer, rpc.getSubscriptionsList());
      for (final Message message : rpc.getPublishList()) {
        handleMessage(peer, message);
      }
      if (rpc.hasControl()) {
        handleControl(peer, rpc.getControl());
      }
      // After the RPC's control part: a PRUNE in it sets the backoff first, a GRAFT in it needs
      // no GRAFT back.
      for (final String topic : subscribed) {
        graftOnSubscribe(peer.id, topic);
      }
      return !rpcFault;
    } finally {
      exit();
    }
  }

  /** @return the topics the peer newly subscribed to */
  private List<String> handleSubscriptions(final PeerState peer,
      final List<RPC.SubOpts> subs) {
    if (subs.size() > config.maxSubscriptionsPerRpc()) {
      count("drop-subscriptions-over-limit");
      return List.of();
    }
    final List<String> added = new ArrayList<>();
    for (final RPC.SubOpts sub : subs) {
      if (!sub.hasTopic()) {
        continue;
      }
      if (sub.getTopicBytes().size() > config.maxTopicLength()) {
        count("drop-topic-too-long");
        continue;
      }
      final String topic = sub.getTopic();
      if (sub.getSubscribe()) {
        if (peer.topics.contains(topic)) {
          continue;
        }
        if (peer.topics.size() >= config.maxTopicsPerPeer()) {
          count("drop-topics-over-limit");
          continue;
        }
        if (peer.topics.size() >= guaranteedTopics()) {
          if (sharedTopics >= config.maxSharedTopics() || (sharedPool != null
              && !sharedPool.tryReserve(io.relaypinner.common.budget.Resource.WORK, 1))) {
            // The node is full, not the peer at fault: a relay announcing its many databases.
            count("drop-topics-shared-full");
            continue;
          }
          sharedTopics++;
        }
        peer.topics.add(topic);
        topicPeers.computeIfAbsent(topic, t -> new LinkedHashSet<>()).add(peer.id);
        added.add(topic);
      } else {
        if (!peer.topics.remove(topic)) {
          continue;
        }
        if (peer.topics.size() >= guaranteedTopics()) {
          sharedTopics--;
          if (sharedPool != null) {
            sharedPool.release(io.relaypinner.common.budget.Resource.WORK, 1);
          }
        }
        removeTopicPeer(topic, peer.id);
        final Set<PeerId> members = mesh.get(topic);
        if (members != null) {
          members.remove(peer.id);
        }
        final Set<PeerId> fanned = fanout.get(topic);
        if (fanned != null) {
          fanned.remove(peer.id);
        }
      }
      changed(topic);
      final boolean subscribed = sub.getSubscribe();
      pendingEvents.add(() -> output.subscriptionChanged(peer.id, topic, subscribed));
    }
    return added;
  }

  /**
   * Admission, cheapest check first: the peer's rate, the size, the topic (length, subscribed),
   * the claimed id against the seen-cache and the checks in flight, and only then the signature
   * (possibly elsewhere, see {@link Output#validateLater}).
   */
  private void handleMessage(final PeerState peer, final Message message) {
    count("message-received");
    if (++peer.messagesThisHeartbeat > config.maxMessagesPerPeerPerHeartbeat()) {
      count("drop-rate-limited");
      return;
    }
    if (message.getData().size() > config.maxMessageSize()) {
      count("drop-oversized");
      return;
    }
    if (message.getTopicBytes().size() > config.maxTopicLength()) {
      count("drop-topic-too-long");
      return;
    }
    if (message.hasTopic() && !subscriptions.contains(message.getTopic())) {
      count("drop-not-subscribed");
      return;
    }
    final StrictSign.Claim claim = StrictSign.claim(message);
    if (claim.invalid() != null) {
      countInvalid(claim.invalid());
      return;
    }
    if (java.util.Arrays.equals(claim.from(), selfBytes)) {
      // Our own message coming back (published before a restart, or echoed): never checked.
      count("drop-self-origin");
      return;
    }
    final MessageId claimed = claim.id();
    if (seen.containsKey(claimed) || validating.contains(claimed)) {
      count("drop-duplicate");
      return;
    }
    if (validating.size() >= config.maxPendingValidations()) {
      count("drop-validation-backlog");
      return;
    }
    validating.add(claimed);
    final PendingValidation pending = new PendingValidation(peer.id, message, claimed);
    if (!output.validateLater(pending)) {
      completeValidation(pending, StrictSign.validate(message));
    }
  }

  /** The signature check of {@code pending} finished with {@code result}: deliver and forward. */
  public void completeValidation(final PendingValidation pending,
      final StrictSign.Result result) {
    enter();
    try {
      if (!validating.remove(pending.claimedId)) {
        return;
      }
      count("signature-checked");
      accept(pending, result);
    } finally {
      exit();
    }
  }

  /** The signature check of {@code pending} will not run (overload): forget the message. */
  public void abandonValidation(final PendingValidation pending) {
    enter();
    try {
      if (validating.remove(pending.claimedId)) {
        count("drop-validation-abandoned");
      }
    } finally {
      exit();
    }
  }

  private void countInvalid(final StrictSign.Invalid invalid) {
    count("drop-invalid-" + invalid.name().toLowerCase(Locale.ROOT).replace('_', '-'));
  }

  private void accept(final PendingValidation pending, final StrictSign.Result result) {
    final Message message = pending.message;
    if (result.invalid() != null) {
      countInvalid(result.invalid());
      return;
    }
    final MessageId id = result.valid().id();
    if (seen.containsKey(id)) {
      count("drop-duplicate");
      return;
    }
    final PeerId author = result.valid().author();
    final String topic = message.getTopic();
    if (!subscriptions.contains(topic)) {
      // We left the topic while the signature was checked.
      count("drop-not-subscribed");
      return;
    }
    markSeen(id);
    if (!id.equals(pending.claimedId)) {
      // The key was sent in a non-canonical encoding: its copies are duplicates too.
      markSeen(pending.claimedId);
    }
    mcache.put(id, message);
    count("message-delivered");
    final PeerId fromId = pending.from;
    final Set<PeerId> members = mesh.getOrDefault(topic, Set.of());
    if (message.getData().size() >= config.idontwantMinSize()) {
      // v1.2: tell mesh peers not to send us what we already have, before we forward.
      for (final PeerId member : members) {
        final PeerState state = peers.get(member);
        if (!member.equals(fromId) && state != null && state.connected && state.idontwant) {
          control(member).getControlBuilder().addIdontwant(ControlIDontWant.newBuilder()
              .addMessageIDs(ByteString.copyFrom(id.bytes())));
          count("idontwant-sent");
        }
      }
    }
    for (final PeerId member : members) {
      if (member.equals(fromId) || member.equals(author)) {
        continue;
      }
      final PeerState state = peers.get(member);
      if (state == null || !state.connected) {
        continue;
      }
      if (state.dontSend.containsKey(id)) {
        count("forward-skipped-idontwant");
        continue;
      }
      message(member, message);
      count("message-forwarded");
    }
    final ReceivedMessage received = new ReceivedMessage(topic, author, fromId,
        message.getData().toByteArray(), id);
    pendingEvents.add(() -> output.deliver(received));
  }

  private void handleControl(final PeerState peer, final ControlMessage control) {
    handleIHave(peer, control.getIhaveList());
    handleIWant(peer, control.getIwantList());
    for (final ControlGraft graft : control.getGraftList()) {
      handleGraft(peer, graft);
    }
    for (final ControlPrune prune : control.getPruneList()) {
      handlePrune(peer, prune);
    }
    for (final ControlIDontWant dontWant : control.getIdontwantList()) {
      handleIDontWant(peer, dontWant);
    }
  }

  private void handleIHave(final PeerState peer, final List<ControlIHave> ihaves) {
    final List<ByteString> wanted = new ArrayList<>();
    for (final ControlIHave ihave : ihaves) {
      if (++peer.ihavesThisHeartbeat > config.maxIHaveMessages()) {
        count("drop-ihave-over-limit");
        break;
      }
      if (!ihave.hasTopicID() || !subscriptions.contains(ihave.getTopicID())) {
        continue;
      }
      for (final ByteString raw : ihave.getMessageIDsList()) {
        if (peer.idsAskedThisHeartbeat >= config.maxIHaveLength()) {
          count("drop-iwant-over-limit");
          break;
        }
        if (raw.size() > config.maxMessageIdLength()) {
          count("drop-message-id-too-long");
          continue;
        }
        final MessageId id = new MessageId(raw.toByteArray());
        if (!seen.containsKey(id)) {
          peer.idsAskedThisHeartbeat++;
          wanted.add(raw);
        }
      }
    }
    if (!wanted.isEmpty() && peer.connected) {
      control(peer.id).getControlBuilder().addIwant(ControlIWant.newBuilder()
          .addAllMessageIDs(wanted));
      count("iwant-sent");
    }
  }

  private void handleIWant(final PeerState peer, final List<ControlIWant> iwants) {
    int answered = 0;
    for (final ControlIWant iwant : iwants) {
      for (final ByteString raw : iwant.getMessageIDsList()) {
        if (answered >= config.maxIHaveLength()) {
          count("drop-iwant-answers-over-limit");
          return;
        }
        if (raw.size() > config.maxMessageIdLength()) {
          count("drop-message-id-too-long");
          continue;
        }
        final MessageId id = new MessageId(raw.toByteArray());
        final Message message = mcache.get(id);
        if (message == null) {
          count("iwant-unknown");
          continue;
        }
        if (mcache.countIWant(id, peer.id) > config.maxIWantAnswers()) {
          count("drop-iwant-retransmission-limit");
          continue;
        }
        if (peer.connected && !peer.dontSend.containsKey(id)) {
          message(peer.id, message);
          answered++;
          count("iwant-answered");
        }
      }
    }
  }

  private void handleGraft(final PeerState peer, final ControlGraft graft) {
    final String topic = graft.getTopicID();
    final Set<PeerId> members = mesh.get(topic);
    if (members == null) {
      // Not our topic: ignore rather than PRUNE, so the peer sets no backoff against us for a
      // topic we may join a moment later (relay auto-subscribe).
      count("graft-unknown-topic");
      return;
    }
    if (members.contains(peer.id)) {
      return;
    }
    if (inBackoff(peer.id, topic)) {
      // Spec v1.1: a GRAFT during backoff is refused with a PRUNE and the backoff is renewed.
      count("graft-during-backoff");
      prune(peer.id, topic, config.pruneBackoff().toMillis());
      return;
    }
    if (!peer.connected) {
      count("graft-without-stream");
      return;
    }
    members.add(peer.id);
    count("graft-accepted");
    changed(topic);
  }

  private void handlePrune(final PeerState peer, final ControlPrune prune) {
    count("prune-received");
    final Set<PeerId> members = prune.getTopicIDBytes().size() > config.maxTopicLength()
        ? null : mesh.get(prune.getTopicID());
    if (members == null) {
      // Not a topic we joined: nothing to leave and no backoff to keep (it would be heap any
      // peer could fill with made-up topics).
      count("prune-unknown-topic");
      return;
    }
    final String topic = prune.getTopicID();
    if (members.remove(peer.id)) {
      changed(topic);
    }
    // Honour the peer's backoff, clamped (uint64 seconds on the wire); one heartbeat of slack
    // so our GRAFT cannot race its expiry.
    final long maxSeconds = config.maxPruneBackoff().toSeconds();
    long seconds = prune.hasBackoff() ? prune.getBackoff() : config.pruneBackoff().toSeconds();
    if (seconds < 0 || seconds > maxSeconds) {
      count("prune-backoff-clamped");
      seconds = maxSeconds;
    }
    setBackoff(peer.id, topic, seconds * 1_000L + config.heartbeatInterval().toMillis());
  }

  private void handleIDontWant(final PeerState peer, final ControlIDontWant dontWant) {
    count("idontwant-received");
    final long expiry = clock.millis()
        + config.heartbeatInterval().toMillis() * config.mcacheLength();
    for (final ByteString raw : dontWant.getMessageIDsList()) {
      if (peer.dontSend.size() >= config.maxIDontWant()) {
        count("drop-idontwant-over-limit");
        return;
      }
      if (raw.size() > config.maxMessageIdLength()) {
        // Ids are kept until they expire: a long one would be heap the peer chooses.
        count("drop-message-id-too-long");
        continue;
      }
      peer.dontSend.put(new MessageId(raw.toByteArray()), expiry);
    }
  }

  // ---------------------------------------------------------------- heartbeat

  /** Mesh maintenance, fanout expiry, IHAVE gossip and cache shifting; every heartbeat. */
  public void heartbeat() {
    enter();
    try {
      final long now = clock.millis();
      expire(now);
      for (final Map.Entry<String, Set<PeerId>> entry : mesh.entrySet()) {
        maintainMesh(entry.getKey(), entry.getValue());
      }
      for (final Iterator<Map.Entry<String, Set<PeerId>>> it = fanout.entrySet().iterator();
          it.hasNext();) {
        final Map.Entry<String, Set<PeerId>> entry = it.next();
        final String topic = entry.getKey();
        final long last = fanoutLastPublished.getOrDefault(topic, 0L);
        if (last + config.fanoutTtl().toMillis() <= now) {
          it.remove();
          fanoutLastPublished.remove(topic);
          changed(topic);
          continue;
        }
        final Set<PeerId> members = entry.getValue();
        members.removeIf(peer -> !eligible(peer, topic));
        if (members.size() < config.d()) {
          members.addAll(candidates(topic, members, config.d() - members.size()));
        }
      }
      emitGossip();
      mcache.shift();
      count("heartbeat");
    } finally {
      exit();
    }
  }

  private void maintainMesh(final String topic, final Set<PeerId> members) {
    if (members.removeIf(peer -> !eligible(peer, topic))) {
      changed(topic);
    }
    if (members.size() < config.dLo()) {
      for (final PeerId peer : candidates(topic, members, config.d() - members.size())) {
        members.add(peer);
        graft(peer, topic);
        changed(topic);
      }
    }
    if (members.size() > config.dHi()) {
      final List<PeerId> shuffled = new ArrayList<>(members);
      Collections.shuffle(shuffled, random);
      for (final PeerId peer : shuffled.subList(config.d(), shuffled.size())) {
        members.remove(peer);
        prune(peer, topic, config.pruneBackoff().toMillis());
      }
      changed(topic);
    }
  }

  /**
   * Graft-on-subscribe (as js-libp2p gossipsub 16+ and rust-libp2p do): a peer whose SUBSCRIBE
   * arrives for a topic we joined, while our mesh for it has fewer than D peers, is grafted at
   * once rather than at the next heartbeat, so a message published right after it subscribed is
   * forwarded to it. It must pass the heartbeat's own test ({@link #meshCandidate}: our stream
   * open, subscribed, not in backoff). Filling to D (JS and rust stop at D_lo) matches what
   * {@link #subscribe} and the heartbeat fill to; the heartbeat prunes only above D_hi, so it
   * leaves such a mesh alone.
   */
  private void graftOnSubscribe(final PeerId peer, final String topic) {
    final Set<PeerId> members = mesh.get(topic);
    if (members == null || members.size() >= config.d() || members.contains(peer)
        || !meshCandidate(peer, topic)) {
      return;
    }
    members.add(peer);
    graft(peer, topic);
    count("graft-on-subscribe");
    changed(topic);
  }

  private void emitGossip() {
    if (config.dLazy() == 0) {
      return;
    }
    final Set<String> topics = new LinkedHashSet<>(mesh.keySet());
    topics.addAll(fanout.keySet());
    for (final String topic : topics) {
      List<MessageId> ids = mcache.gossipIds(topic);
      if (ids.isEmpty()) {
        continue;
      }
      if (ids.size() > config.maxIHaveLength()) {
        ids = ids.subList(0, config.maxIHaveLength());
      }
      final Set<PeerId> exclude = new LinkedHashSet<>(mesh.getOrDefault(topic, Set.of()));
      exclude.addAll(fanout.getOrDefault(topic, Set.of()));
      final ControlIHave.Builder ihave = ControlIHave.newBuilder().setTopicID(topic);
      for (final MessageId id : ids) {
        ihave.addMessageIDs(ByteString.copyFrom(id.bytes()));
      }
      final ControlIHave built = ihave.build();
      for (final PeerId peer : shuffledEligible(topic, exclude, config.dLazy(), false)) {
        control(peer).getControlBuilder().addIhave(built);
        count("ihave-sent");
      }
    }
  }

  private void expire(final long now) {
    for (final Iterator<Map.Entry<MessageId, Long>> it = seen.entrySet().iterator();
        it.hasNext();) {
      if (it.next().getValue() > now) {
        break;
      }
      it.remove();
    }
    for (final PeerState peer : peers.values()) {
      peer.backoff.values().removeIf(expiry -> expiry <= now);
      peer.dontSend.values().removeIf(expiry -> expiry <= now);
      peer.ihavesThisHeartbeat = 0;
      peer.idsAskedThisHeartbeat = 0;
      peer.messagesThisHeartbeat = 0;
    }
  }

  // ---------------------------------------------------------------- views

  /** Topics we subscribe to. */
  public Set<String> topics() {
    return Set.copyOf(subscriptions);
  }

  /** Connected peers subscribed to {@code topic}. */
  public Set<PeerId> peers(final String topic) {
    final Set<PeerId> result = new LinkedHashSet<>();
    for (final PeerId peer : topicPeers.getOrDefault(topic, Set.of())) {
      if (isConnected(peer)) {
        result.add(peer);
      }
    }
    return Collections.unmodifiableSet(result);
  }

  /** The topics a peer announced. */
  public Set<String> topicsOf(final PeerId peer) {
    final PeerState state = peers.get(peer);
    return state == null ? Set.of() : Set.copyOf(state.topics);
  }

  /** Our mesh for {@code topic} (empty when not subscribed). */
  public Set<PeerId> meshPeers(final String topic) {
    return Set.copyOf(mesh.getOrDefault(topic, Set.of()));
  }

  /** Our fanout for {@code topic}. */
  public Set<PeerId> fanoutPeers(final String topic) {
    return Set.copyOf(fanout.getOrDefault(topic, Set.of()));
  }

  /** Whether we keep a backoff for {@code peer} on {@code topic}. */
  public boolean inBackoff(final PeerId peer, final String topic) {
    final PeerState state = peers.get(peer);
    final Long expiry = state == null ? null : state.backoff.get(topic);
    return expiry != null && expiry > clock.millis();
  }

  /** Backoff entries kept, over all peers (bounded: see {@link GossipsubConfig}). */
  public int backoffEntries() {
    int total = 0;
    for (final PeerState peer : peers.values()) {
      total += peer.backoff.size();
    }
    return total;
  }

  /**
   * Subscriptions of peers beyond their guaranteed ones, over all peers (bounded by
   * {@link GossipsubConfig#maxSharedTopics()}).
   */
  public int sharedTopics() {
    return sharedTopics;
  }

  /** Distinct topics remote peers announced (bounded by peers times maxTopicsPerPeer). */
  public int knownTopics() {
    return topicPeers.size();
  }

  /** IDONTWANT ids kept, over all peers (bounded by maxIDontWant per peer). */
  public int dontSendEntries() {
    int total = 0;
    for (final PeerState peer : peers.values()) {
      total += peer.dontSend.size();
    }
    return total;
  }

  /** Peers the engine keeps state for (connected, or sent us an RPC and not yet removed). */
  public int peerCount() {
    return peers.size();
  }

  /** Messages whose signature check is under way. */
  public int pendingValidations() {
    return validating.size();
  }

  /** Entries in the seen-cache. */
  public int seenEntries() {
    return seen.size();
  }

  /** Topics whose peers or mesh changed since the last call (for incremental views). */
  Set<String> takeChangedTopics() {
    final Set<String> result = Set.copyOf(changedTopics);
    changedTopics.clear();
    return result;
  }

  /** Messages in the cache. */
  public int cachedMessages() {
    return mcache.size();
  }

  /** Whether {@code id} is in the seen-cache. */
  public boolean hasSeen(final MessageId id) {
    return seen.containsKey(id);
  }

  /** Counters by reason ({@code drop-*} for every dropped message or control item). */
  public Map<String, Long> counters() {
    final Map<String, Long> snapshot = new TreeMap<>();
    counters.forEach((key, value) -> snapshot.put(key, value.get()));
    return snapshot;
  }

  /** One counter; 0 when never counted. Safe from any thread. */
  public long counter(final String name) {
    final AtomicLong value = counters.get(name);
    return value == null ? 0 : value.get();
  }

  /** Grows whenever subscriptions, peers' topics or meshes change (for cached views). */
  public long version() {
    return version;
  }

  // ---------------------------------------------------------------- helpers

  private int guaranteedTopics() {
    return Math.min(config.guaranteedTopicsPerPeer(), config.maxTopicsPerPeer());
  }

  private boolean isConnected(final PeerId peer) {
    final PeerState state = peers.get(peer);
    return state != null && state.connected;
  }

  private boolean eligible(final PeerId peer, final String topic) {
    final PeerState state = peers.get(peer);
    return state != null && state.connected && state.topics.contains(topic);
  }

  /**
   * Whether we may GRAFT {@code peer} on {@code topic}: the one rule for every graft we start
   * (subscribe, heartbeat, fanout, graft-on-subscribe): our stream to it open, subscribed, not
   * in backoff.
   */
  private boolean meshCandidate(final PeerId peer, final String topic) {
    return eligible(peer, topic) && !inBackoff(peer, topic);
  }

  /** Up to {@code count} random {@link #meshCandidate}s outside {@code exclude}. */
  private List<PeerId> candidates(final String topic, final Set<PeerId> exclude,
      final int count) {
    return shuffledEligible(topic, exclude, count, true);
  }

  private List<PeerId> shuffledEligible(final String topic, final Set<PeerId> exclude,
      final int count, final boolean forMesh) {
    if (count <= 0) {
      return List.of();
    }
    final List<PeerId> pool = new ArrayList<>();
    for (final PeerId peer : topicPeers.getOrDefault(topic, Set.of())) {
      if (!exclude.contains(peer)
          && (forMesh ? meshCandidate(peer, topic) : eligible(peer, topic))) {
        pool.add(peer);
      }
    }
    Collections.shuffle(pool, random);
    return pool.size() <= count ? pool : new ArrayList<>(pool.subList(0, count));
  }

  private void removeTopicPeer(final String topic, final PeerId peer) {
    final Set<PeerId> members = topicPeers.get(topic);
    if (members != null) {
      members.remove(peer);
      if (members.isEmpty()) {
        topicPeers.remove(topic);
      }
    }
  }

  private void graft(final PeerId peer, final String topic) {
    control(peer).getControlBuilder().addGraft(ControlGraft.newBuilder().setTopicID(topic));
    count("graft-sent");
  }

  private void prune(final PeerId peer, final String topic, final long backoffMillis) {
    setBackoff(peer, topic, backoffMillis);
    if (isConnected(peer)) {
      control(peer).getControlBuilder().addPrune(ControlPrune.newBuilder().setTopicID(topic)
          .setBackoff(backoffMillis / 1_000));
      count("prune-sent");
    }
  }

  private void setBackoff(final PeerId peer, final String topic, final long millis) {
    final PeerState state = peers.get(peer);
    if (state == null) {
      return;
    }
    final long expiry = clock.millis() + millis;
    final Long previous = state.backoff.remove(topic);
    if (previous == null && state.backoff.size() >= config.maxBackoffsPerPeer()) {
      final Iterator<String> oldest = state.backoff.keySet().iterator();
      oldest.next();
      oldest.remove();
      count("backoff-evicted");
    }
    state.backoff.put(topic, previous == null ? expiry : Math.max(previous, expiry));
  }

  private void markSeen(final MessageId id) {
    // Re-inserted so the map stays in expiry order (the heartbeat expires from the front).
    seen.remove(id);
    if (seen.size() >= config.maxSeenEntries()) {
      final Iterator<MessageId> oldest = seen.keySet().iterator();
      oldest.next();
      oldest.remove();
      count("seen-evicted");
    }
    seen.put(id, clock.millis() + config.seenTtl().toMillis());
  }

  private static RPC.SubOpts sub(final String topic, final boolean subscribe) {
    return RPC.SubOpts.newBuilder().setSubscribe(subscribe).setTopic(topic).build();
  }

  private RPC.Builder control(final PeerId peer) {
    return pendingControl.computeIfAbsent(peer, p -> RPC.newBuilder());
  }

  private void message(final PeerId peer, final Message message) {
    pendingMessages.computeIfAbsent(peer, p -> new ArrayList<>()).add(message);
  }

  private void count(final String name) {
    counters.computeIfAbsent(name, n -> new AtomicLong()).incrementAndGet();
    if (FAULTS.contains(name)) {
      rpcFault = true;
    }
  }

  /** Set by {@link #count} while {@link #handleRpc} runs: the RPC broke a bound. */
  private boolean rpcFault;

  private void changed() {
    version++;
  }

  private void changed(final String topic) {
    changedTopics.add(topic);
    version++;
  }

  private void enter() {
    depth++;
  }

  private void exit() {
    depth--;
    if (depth > 0) {
      return;
    }
    depth++;
    try {
      flush();
    } finally {
      depth--;
    }
    // Events run outside any engine call, so a callback may call straight back in.
    while (!pendingEvents.isEmpty()) {
      pendingEvents.poll().run();
    }
  }

  /**
   * Sends a control RPC whole, or split when large (many topics' IHAVEs) or when it carries more
   * than {@link GossipsubConfig#MAX_SUBSCRIPTIONS_PER_RPC} subscription changes: subscriptions in
   * RPCs of at most that many, in order, then one RPC per control item, so no frame comes near
   * the 4 MiB a JS peer reads and no relay-pinner drops our subscriptions.
   */
  private void sendControl(final PeerId peer, final RPC rpc) {
    final int subscriptions = rpc.getSubscriptionsCount();
    if (subscriptions <= GossipsubConfig.MAX_SUBSCRIPTIONS_PER_RPC
        && rpc.getSerializedSize() <= config.maxRpcSize() / 4) {
      output.send(peer, rpc);
      return;
    }
    // A relay following many databases: every relay-pinner drops an RPC with more than
    // MAX_SUBSCRIPTIONS_PER_RPC subscription changes whole (and counts it as our fault).
    final List<RPC.SubOpts> subs = rpc.getSubscriptionsList();
    for (int from = 0; from < subscriptions;
        from += GossipsubConfig.MAX_SUBSCRIPTIONS_PER_RPC) {
      final int to = Math.min(subscriptions, from + GossipsubConfig.MAX_SUBSCRIPTIONS_PER_RPC);
      output.send(peer, RPC.newBuilder().addAllSubscriptions(subs.subList(from, to)).build());
      count("subscriptions-rpc-sent");
    }
    if (!rpc.hasControl()) {
      return;
    }
    final ControlMessage control = rpc.getControl();
    for (final ControlIHave item : control.getIhaveList()) {
      output.send(peer, controlRpc(ControlMessage.newBuilder().addIhave(item)));
    }
    for (final ControlIWant item : control.getIwantList()) {
      output.send(peer, controlRpc(ControlMessage.newBuilder().addIwant(item)));
    }
    for (final ControlIDontWant item : control.getIdontwantList()) {
      output.send(peer, controlRpc(ControlMessage.newBuilder().addIdontwant(item)));
    }
    if (control.getGraftCount() > 0 || control.getPruneCount() > 0) {
      output.send(peer, controlRpc(ControlMessage.newBuilder()
          .addAllGraft(control.getGraftList()).addAllPrune(control.getPruneList())));
    }
  }

  private static RPC controlRpc(final ControlMessage.Builder control) {
    return RPC.newBuilder().setControl(control).build();
  }

  private void flush() {
    final Set<PeerId> targets = new LinkedHashSet<>(pendingControl.keySet());
    targets.addAll(pendingMessages.keySet());
    for (final PeerId peer : targets) {
      final RPC.Builder control = pendingControl.remove(peer);
      final List<Message> messages = pendingMessages.remove(peer);
      if (!isConnected(peer)) {
        continue;
      }
      if (control != null) {
        sendControl(peer, control.build());
      }
      if (messages != null) {
        // One message per RPC keeps every frame below the peer's limit whatever the batch size.
        for (final Message message : messages) {
          output.send(peer, RPC.newBuilder().addPublish(message).build());
        }
      }
    }
  }
}
