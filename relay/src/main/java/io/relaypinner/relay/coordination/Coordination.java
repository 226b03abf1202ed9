package io.relaypinner.relay.coordination;

import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.relay.storage.GcPolicy;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * How this relay coordinates with the other relays on the same stores (issue 24): who replicates
 * which database ({@link DatabaseOwnership}), heads changes ({@link HeadsAnnouncer}), media pin
 * work ({@link MediaWorkQueue}) and who collects garbage ({@code gcPolicy}, the
 * {@link GcPolicy} of the one {@code StorageGc}: {@link GcPolicy#ALWAYS} alone, the GC-leader
 * lease, {@link GcLeaderPolicy}, on shared stores). One path: the embedded
 * stores use {@link #local()}, where this relay is alone and owns everything; shared stores use
 * {@link PostgresCoordination}.
 */
public record Coordination(DatabaseOwnership ownership, HeadsAnnouncer heads,
    MediaWorkQueue media, GcPolicy gcPolicy, AutoCloseable resources)
    implements AutoCloseable {
  public Coordination {
    Objects.requireNonNull(ownership, "ownership");
    Objects.requireNonNull(heads, "heads");
    Objects.requireNonNull(media, "media");
    Objects.requireNonNull(gcPolicy, "gcPolicy");
    Objects.requireNonNull(resources, "resources");
  }

  /** A relay alone on its own stores: it owns every database, tells nobody, claims every pin. */
  public static Coordination local() {
    final DatabaseOwnership ownership = new DatabaseOwnership() {
      @Override
      public void want(final String name) {
      }

      @Override
      public void standBy(final String name) {
      }

      @Override
      public boolean wants(final String name) {
        return true;
      }

      @Override
      public void drop(final String name) {
      }

      @Override
      public boolean owns(final String name) {
        return true;
      }

      @Override
      public Optional<Fence> fence(final String name) {
        // The embedded stores ignore fences: nobody else writes them.
        return Optional.of(new Fence(name, "local", 0));
      }

      @Override
      public void onAcquired(final Consumer<String> listener) {
        // Every database is owned from the start: nothing is ever newly acquired.
      }
    };
    final HeadsAnnouncer heads = new HeadsAnnouncer() {
      @Override
      public void announce(final String address, final List<String> cids, final long epoch) {
      }

      @Override
      public void onAnnounced(final BiConsumer<String, List<String>> listener) {
      }
    };
    final MediaWorkQueue.Claim noClaim = done -> { };
    return new Coordination(ownership, heads, cid -> Optional.of(noClaim), GcPolicy.ALWAYS,
        () -> { });
  }

  @Override
  public void close() {
    try {
      resources.close();
    } catch (final Exception e) {
      throw new IllegalStateException("closing the coordination failed", e);
    }
  }
}
