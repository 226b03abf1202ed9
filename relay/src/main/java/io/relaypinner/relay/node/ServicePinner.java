package io.relaypinner.relay.node;

import static io.relaypinner.common.Failures.rootMessage;

import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.pinsvc.PinningServiceEngine;
import io.relaypinner.relay.storage.StorageQuota;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the Pinning Service API pins: it dials the request's origins that are dialable (in
 * deployed mode public ones only, as AutoNAT's dial-backs; best effort, without waiting), then
 * fetches the DAG over bitswap and pins it for the request's own holder; removing the request
 * releases that hold only. At the storage quota a new pin fails at once (its request ends
 * "failed"), counted as {@code pin}.
 */
final class ServicePinner implements PinningServiceEngine.Pinner {
  private static final Logger LOG = LoggerFactory.getLogger(ServicePinner.class);

  private final Host host;
  private final NetworkPinner pinner;
  private final NetworkPinner.Limits limits;
  private final PinStore pins;
  private final StorageQuota quota;
  /** Origins the relay may dial: in deployed mode public ones only (as AutoNAT). */
  private final Predicate<Multiaddr> dialable;

  ServicePinner(final Host host, final NetworkPinner pinner, final NetworkPinner.Limits limits,
      final PinStore pins, final StorageQuota quota, final Predicate<Multiaddr> dialable) {
    this.dialable = Objects.requireNonNull(dialable, "dialable");
    this.host = Objects.requireNonNull(host, "host");
    this.pinner = Objects.requireNonNull(pinner, "pinner");
    this.limits = Objects.requireNonNull(limits, "limits");
    this.pins = Objects.requireNonNull(pins, "pins");
    this.quota = Objects.requireNonNull(quota, "quota");
  }

  @Override
  public CompletableFuture<?> pin(final Cid cid, final PinHolder holder,
      final List<Multiaddr> origins) {
    for (final Multiaddr origin : origins) {
      if (origin.peerId().isPresent() && dialable.test(origin)) {
        host.dial(origin).whenComplete((connection, error) -> {
          if (error != null) {
            LOG.debug("pin origin {} not reached: {}", origin, rootMessage(error));
          }
        });
      }
    }
    return quota.admit("pin", () -> pinner.pin(cid, holder, limits));
  }

  @Override
  public boolean release(final Cid cid, final PinHolder holder) {
    pins.release(cid, holder);
    return pins.isPinned(cid);
  }
}
