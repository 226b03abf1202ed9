package io.relaypinner.relay.coordination;

import io.relaypinner.multiformats.Cid;
import java.util.Optional;

/**
 * Media pins shared by the relays on the shared stores without duplicates: before a relay
 * fetches a media DAG it claims the CID; a claim another relay holds comes back empty (that relay
 * is pinning it; the pin shows in the shared pins when done). A claim ends with the pin; a relay
 * that dies loses its claims. With the embedded stores every claim succeeds
 * ({@link Coordination#local()}).
 */
public interface MediaWorkQueue {
  /** A claimed CID; {@link #close} it when its pin ended. */
  interface Claim {
    /** Ends the claim; {@code done}: the pin succeeded (the work is gone). */
    void close(boolean done);
  }

  /** Claims {@code cid}, empty when another relay works on it now. */
  Optional<Claim> claim(Cid cid);
}
