package io.relaypinner.libp2p.protocol.kad;

import io.relaypinner.multiformats.PeerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * One iterative Kademlia lookup (libp2p/specs kad-dht/README.md, "Peer routing" and "Content
 * provider discovery"), without Netty: starting from the closest peers we know, ask at most
 * alpha peers at a time for peers closer to the target, always the closest not yet asked, until
 * the k closest peers that answered have all been asked (no closer peer is left to ask), the
 * wanted number of providers was found (GET_PROVIDERS), or the deadline passed. A peer that
 * fails or does not answer within the request timeout is dropped from the set.
 *
 * <p>Bounded: at most {@code 8 k} candidates are kept (the farthest are forgotten), each peer is
 * asked once, and the whole lookup ends at its deadline with what it has.
 *
 * <p>Requests go through a {@link Network}, timers through a {@link Timer}: a simulated network
 * and a manual timer in tests, streams and the event loop in {@link KadDht}. Thread-safe: answers
 * may arrive on any thread.
 */
public final class KadLookup {
  /** Sends one request to one peer. */
  public interface Network {
    /**
     * Sends {@code request} to {@code peer} (dialled on its given addresses if not connected)
     * and completes with its answer, or exceptionally.
     */
    CompletableFuture<KadMessage> request(KadPeer peer, KadMessage request);
  }

  /** Runs a task later. */
  public interface Timer {
    /** Runs {@code task} after {@code delay}; the returned action cancels it. */
    Runnable schedule(Runnable task, Duration delay);
  }

  /** Observes the peers of a lookup (the routing table learns from them). */
  public interface Listener {
    Listener NONE = new Listener() {};

    /** {@code peer} answered a request: it is a DHT server. */
    default void answered(final KadPeer peer) {}

    /** {@code peer} failed or timed out. */
    default void failed(final PeerId peer) {}
  }

  /** What a lookup found. */
  public record Result(List<KadPeer> closest, List<KadPeer> providers, int asked, int failed,
      boolean timedOut) {
    public Result {
      closest = List.copyOf(closest);
      providers = List.copyOf(providers);
    }
  }

  private enum State { HEARD, WAITING, ANSWERED, FAILED }

  private static final class Candidate {
    final KadPeer peer;
    final KadKey key;
    State state = State.HEARD;
    Runnable cancelTimeout;

    Candidate(final KadPeer peer) {
      this.peer = peer;
      this.key = peer.key();
    }
  }

  private final KadConfig config;
  private final KadMessage.Type type;
  private final byte[] key;
  private final KadKey target;
  private final PeerId self;
  private final int wantedProviders;
  private final Network network;
  private final Timer timer;
  private final Listener listener;
  private final TreeMap<KadKey, Candidate> candidates;
  private final Map<PeerId, KadPeer> providers = new LinkedHashMap<>();
  private final CompletableFuture<Result> result = new CompletableFuture<>();
  private int inFlight;
  private int asked;
  private int failed;
  private Runnable cancelDeadline;
  private boolean done;

  /**
   * @param type FIND_NODE (closest peers) or GET_PROVIDERS
   * @param key the DHT key (a peer id's or a content multihash's bytes)
   * @param wantedProviders stop once this many providers are known (GET_PROVIDERS); 0 = never
   */
  public KadLookup(final KadConfig config, final KadMessage.Type type, final byte[] key,
      final PeerId self, final int wantedProviders, final Network network, final Timer timer,
      final Listener listener) {
    if (type != KadMessage.Type.FIND_NODE && type != KadMessage.Type.GET_PROVIDERS) {
      throw new IllegalArgumentException("a lookup is FIND_NODE or GET_PROVIDERS: " + type);
    }
    this.config = Objects.requireNonNull(config, "config");
    this.type = type;
    this.key = key.clone();
    this.target = KadKey.of(key);
    this.self = Objects.requireNonNull(self, "self");
    this.wantedProviders = wantedProviders;
    this.network = Objects.requireNonNull(network, "network");
    this.timer = Objects.requireNonNull(timer, "timer");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.candidates = new TreeMap<>(target.byDistance());
  }

  /** The lookup's point in the keyspace. */
  public KadKey target() {
    return target;
  }

  /**
   * Starts from {@code seeds} (the closest peers we know, with addresses) and completes when the
   * lookup ends; never exceptionally.
   */
  public CompletableFuture<Result> start(final List<KadPeer> seeds) {
    synchronized (this) {
      cancelDeadline = timer.schedule(this::deadline, config.lookupTimeout());
      for (final KadPeer seed : seeds) {
        learn(seed);
      }
    }
    step();
    return result;
  }

  /** Providers known before the lookup (our own store), counted towards the wanted number. */
  public synchronized void addProviders(final List<KadPeer> known) {
    for (final KadPeer provider : known) {
      providers.putIfAbsent(provider.id(), provider);
    }
  }

  private void learn(final KadPeer peer) {
    if (peer.id().equals(self)) {
      return;
    }
    final KadKey point = peer.key();
    final Candidate known = candidates.get(point);
    if (known != null) {
      return;
    }
    candidates.put(point, new Candidate(peer));
    // Keep the set bounded: forget the farthest peers nobody is waiting for.
    while (candidates.size() > 8 * config.k()) {
      final Map.Entry<KadKey, Candidate> last = candidates.lastEntry();
      if (last.getValue().state == State.WAITING) {
        break;
      }
      candidates.pollLastEntry();
    }
  }

  /** Sends as many requests as alpha allows, or finishes. */
  private void step() {
    final List<Candidate> send = new ArrayList<>();
    Result finished = null;
    synchronized (this) {
      if (done) {
        return;
      }
      if (wantedProviders > 0 && providers.size() >= wantedProviders) {
        finished = finish(false);
      } else {
        // Walk the closest candidates that did not fail: the first k decide termination.
        int considered = 0;
        boolean pending = false;
        for (final Iterator<Candidate> it = candidates.values().iterator();
            it.hasNext() && considered < config.k(); ) {
          final Candidate c = it.next();
          if (c.state == State.FAILED) {
            continue;
          }
          considered++;
          if (c.state == State.HEARD) {
            pending = true;
            if (inFlight + send.size() < config.alpha()) {
              send.add(c);
            }
          } else if (c.state == State.WAITING) {
            pending = true;
          }
        }
        if (!pending) {
          finished = finish(false);
        }
        for (final Candidate c : send) {
          c.state = State.WAITING;
          inFlight++;
          asked++;
        }
      }
    }
    if (finished != null) {
      result.complete(finished);
      return;
    }
    for (final Candidate c : send) {
      ask(c);
    }
  }

  private void ask(final Candidate c) {
    final CompletableFuture<KadMessage> answer;
    try {
      answer = network.request(c.peer, KadMessage.request(type, key));
    } catch (final RuntimeException e) {
      answered(c, null);
      return;
    }
    synchronized (this) {
      if (c.state == State.WAITING && !answer.isDone()) {
        c.cancelTimeout = timer.schedule(() -> answered(c, null), config.requestTimeout());
      }
    }
    answer.whenComplete((message, error) -> answered(c, error == null ? message : null));
  }

  private void answered(final Candidate c, final KadMessage message) {
    synchronized (this) {
      if (c.state != State.WAITING) {
        return;
      }
      inFlight--;
      if (c.cancelTimeout != null) {
        c.cancelTimeout.run();
      }
      if (message == null || message.type() != type) {
        c.state = State.FAILED;
        failed++;
      } else {
        c.state = State.ANSWERED;
        for (final KadPeer closer : message.closerPeers()) {
          learn(closer);
        }
        if (type == KadMessage.Type.GET_PROVIDERS) {
          for (final KadPeer provider : message.providerPeers()) {
            if (providers.size() < config.maxPeersPerMessage()) {
              providers.putIfAbsent(provider.id(), provider);
            }
          }
        }
      }
    }
    if (c.state == State.ANSWERED) {
      listener.answered(c.peer);
    } else {
      listener.failed(c.peer.id());
    }
    step();
  }

  private void deadline() {
    final Result finished;
    synchronized (this) {
      if (done) {
        return;
      }
      finished = finish(true);
    }
    result.complete(finished);
  }

  /** Ends the lookup (under the lock); the caller completes the future outside it. */
  private Result finish(final boolean timedOut) {
    done = true;
    if (cancelDeadline != null) {
      cancelDeadline.run();
    }
    final List<KadPeer> closest = new ArrayList<>();
    for (final Candidate c : candidates.values()) {
      if (c.cancelTimeout != null) {
        c.cancelTimeout.run();
      }
      if (c.state == State.ANSWERED && closest.size() < config.k()) {
        closest.add(c.peer);
      }
    }
    final List<KadPeer> found = new ArrayList<>(providers.values());
    return new Result(closest, wantedProviders > 0 && found.size() > wantedProviders
        ? found.subList(0, wantedProviders) : found, asked, failed, timedOut);
  }

  @Override
  public String toString() {
    return "KadLookup{" + type + " " + target + " key=" + Arrays.hashCode(key) + "}";
  }
}
