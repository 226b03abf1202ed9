package io.relaypinner.relay.api;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.OrbitDbAddress;

/**
 * What {@code POST /pinning/has-entry} asks of the relay's replication: is this entry in the
 * relay's own verified log of this database? Called off the event loop (it may read the
 * datastore: one key, never a scan of the log).
 */
@FunctionalInterface
public interface EntryLookup {
  /** The database is followed and its log was asked. */
  String SOURCE_LOG = "log";
  /** The relay does not follow the database: it cannot tell. */
  String SOURCE_NOT_FOLLOWED = "database-not-followed";
  /** The relay follows the database but its replica is not open (yet): it cannot tell. */
  String SOURCE_NOT_OPEN = "database-not-open";

  /**
   * The answer.
   *
   * @param hasEntry true: verified and stored in the database's log; false: the log does not hold
   *     it; null: the relay cannot tell ({@code source} says why)
   * @param entryCount the log's verified entries, or null when {@code hasEntry} is null
   * @param source how the answer was found ({@link #SOURCE_LOG}, {@link #SOURCE_NOT_FOLLOWED},
   *     {@link #SOURCE_NOT_OPEN})
   */
  record Result(Boolean hasEntry, Long entryCount, String source) {
    /** Not known here, for {@code source}. */
    public static Result unknown(final String source) {
      return new Result(null, null, source);
    }
  }

  Result lookup(OrbitDbAddress database, Cid entry);
}
