package io.relaypinner.libp2p.protocol.autonat;

import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiaddrComponent;
import io.relaypinner.multiformats.MultiaddrProtocol;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * The decisions of an AutoNAT v1 server (libp2p/specs autonat/autonat-v1.md), without Netty: which
 * requested addresses it dials back, and how often. As go-libp2p does, it dials only addresses on
 * the IP the request came from (so the server cannot be aimed at third parties), only TCP and
 * WebSocket (what it can dial), never addresses {@code dialable} refuses (private ones in deployed
 * mode), and at most the configured number of requests per window, in all and per peer (the
 * per-peer table holds only peers seen in the current window).
 *
 * <p>Thread-safe.
 */
public final class AutoNatEngine {
  /** Why a request was refused; counted. */
  public enum Refusal {
    BAD_REQUEST, GLOBAL_RATE, PEER_RATE, NO_DIALABLE_ADDRESS;

    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** The outcome of a request: addresses to dial, or a refusal. */
  public record Decision(List<Multiaddr> dial, Refusal refusal) {}

  private final AutoNatConfig config;
  private final Clock clock;
  private final Predicate<Multiaddr> dialable;
  private Instant windowStart;
  private int globalInWindow;
  private final Map<PeerId, Integer> perPeer = new HashMap<>();
  private final Map<String, AtomicLong> counters = new TreeMap<>();

  /**
   * @param dialable which addresses may be dialled at all (e.g. public ones in deployed mode)
   */
  public AutoNatEngine(final AutoNatConfig config, final Clock clock,
      final Predicate<Multiaddr> dialable) {
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.dialable = Objects.requireNonNull(dialable, "dialable");
    this.windowStart = clock.instant();
    for (final Refusal refusal : Refusal.values()) {
      counters.put("refused_" + refusal.label(), new AtomicLong());
    }
    for (final String name : List.of("dial_ok", "dial_error")) {
      counters.put(name, new AtomicLong());
    }
  }

  public AutoNatConfig config() {
    return config;
  }

  /**
   * A DIAL request from {@code peer}, whose connection comes from {@code observedIp}, for
   * {@code requested} addresses.
   */
  public synchronized Decision decide(final PeerId peer, final byte[] observedIp,
      final List<Multiaddr> requested) {
    final Instant now = clock.instant();
    if (!now.isBefore(windowStart.plus(config.window()))) {
      windowStart = now;
      globalInWindow = 0;
      perPeer.clear();
    }
    if (globalInWindow >= config.globalDialsPerWindow()) {
      return refuse(Refusal.GLOBAL_RATE);
    }
    if (perPeer.getOrDefault(peer, 0) >= config.peerDialsPerWindow()) {
      return refuse(Refusal.PEER_RATE);
    }
    final Set<Multiaddr> out = new LinkedHashSet<>();
    for (final Multiaddr address : requested) {
      if (out.size() == config.maxAddresses()) {
        break;
      }
      if (sameIp(address, observedIp) && tcpOrWs(address) && dialable.test(address)) {
        out.add(address.withoutPeerId());
      }
    }
    if (out.isEmpty()) {
      return refuse(Refusal.NO_DIALABLE_ADDRESS);
    }
    globalInWindow++;
    perPeer.merge(peer, 1, Integer::sum);
    return new Decision(new ArrayList<>(out), null);
  }

  private Decision refuse(final Refusal refusal) {
    counters.get("refused_" + refusal.label()).incrementAndGet();
    return new Decision(List.of(), refusal);
  }

  /** Counts a request refused before {@link #decide} (malformed, wrong peer). */
  public void badRequest() {
    counters.get("refused_" + Refusal.BAD_REQUEST.label()).incrementAndGet();
  }

  /** Counts the outcome of a dial-back. */
  public void dialed(final boolean ok) {
    counters.get(ok ? "dial_ok" : "dial_error").incrementAndGet();
  }

  private static boolean sameIp(final Multiaddr address, final byte[] observedIp) {
    if (address.components().isEmpty()) {
      return false;
    }
    final MultiaddrComponent first = address.components().get(0);
    return (first.protocol() == MultiaddrProtocol.IP4 || first.protocol() == MultiaddrProtocol.IP6)
        && java.util.Arrays.equals(first.value(), observedIp);
  }

  private static boolean tcpOrWs(final Multiaddr address) {
    final List<MultiaddrComponent> c = address.withoutPeerId().components();
    if (c.size() < 2 || c.get(1).protocol() != MultiaddrProtocol.TCP) {
      return false;
    }
    if (c.size() == 2) {
      return true;
    }
    return c.size() == 3 && c.get(2).protocol() == MultiaddrProtocol.WS;
  }

  /** {@code dial_ok}, {@code dial_error} and {@code refused_<reason>}. */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    synchronized (this) {
      counters.forEach((k, v) -> out.put(k, v.get()));
    }
    return out;
  }

  /** Peers in the per-peer table now (bounded by the global rate). */
  public synchronized int trackedPeers() {
    return perPeer.size();
  }
}
