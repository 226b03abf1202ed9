package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.Optional;

/**
 * Who writes a log's shared heads when several nodes share one datastore
 * ({@link LogConfig#stateScope()}): for a leased log (a followed database, one owner at a time)
 * only its owner, with its lease's fencing token, so that a former owner that paused past its
 * lease cannot overwrite the new owner's heads; for a log nobody leases (an access controller's
 * database) every node, unfenced, as each of them joins it.
 */
public interface LogFences {
  /** Every log is nobody's: every node writes the shared heads, unfenced. */
  LogFences NONE = new LogFences() {
    @Override
    public boolean leased(final OrbitDbAddress address) {
      return false;
    }

    @Override
    public Optional<Fence> fence(final OrbitDbAddress address) {
      return Optional.empty();
    }
  };

  /** Whether {@code address} is leased by one owner among the nodes. */
  boolean leased(OrbitDbAddress address);

  /** The lease's fence while this node owns {@code address}, empty when it does not. */
  Optional<Fence> fence(OrbitDbAddress address);
}
