package io.relaypinner.ipfs.datastore;

import java.util.Objects;

/**
 * A fencing token: the lease {@code name} as {@code holder} took it, at {@code epoch}. A store
 * shared by several nodes (PostgreSQL) accepts a write fenced by it only while that lease is
 * still held at that epoch, so a write a node sends after it lost the lease (it paused longer
 * than the lease, then woke) is refused instead of landing after the new holder's writes. Every
 * takeover of a lease gets a higher epoch; a renewal keeps it. Stores of one node alone ignore
 * fences ({@link Datastore#write(java.util.Map, java.util.Collection, Fence)}).
 *
 * @param name the lease's name (a database address, the GC leadership)
 * @param holder who holds it (a relay's peer id)
 * @param epoch the lease's epoch when it was taken
 */
public record Fence(String name, String holder, long epoch) {
  public Fence {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(holder, "holder");
  }
}
