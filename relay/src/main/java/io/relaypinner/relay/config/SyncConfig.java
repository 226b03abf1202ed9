package io.relaypinner.relay.config;

import io.relaypinner.relay.pubsub.TopicPolicy;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The sync engine and media pinning, spec 3.5 and 8 (CONTRACT.md:
 * {@code RELAY_PINNING_SYNC_TIMEOUT_MS}, {@code RELAY_ORBITDB_SYNC_COOLDOWN_MS},
 * {@code RELAY_SYNC_SLOTS}, {@code RELAY_MEDIA_CID_FIELDS}).
 *
 * @param pinningSyncTimeout how long {@code POST /pinning/sync} waits before answering 504
 * @param syncCooldown how long a topic is held back after a timed-out or failed sync
 * @param slots concurrent topic syncs
 * @param mediaCidFields payload fields holding media CIDs: a name, a dotted path
 *     ({@code image.cid}) or a prefix ending in {@code *} ({@code profilePicture*})
 */
public record SyncConfig(
    Duration pinningSyncTimeout, Duration syncCooldown, int slots, List<String> mediaCidFields,
    TopicPolicy topicPolicy) {

  /** Without an allowlist or denylist ({@link TopicPolicy#OPEN}). */
  public SyncConfig(final Duration pinningSyncTimeout, final Duration syncCooldown,
      final int slots, final List<String> mediaCidFields) {
    this(pinningSyncTimeout, syncCooldown, slots, mediaCidFields, TopicPolicy.OPEN);
  }

  /** The fields the JavaScript relay-pinner scans (notes/orbitdb-wire.md 3.28). */
  public static final List<String> DEFAULT_MEDIA_CID_FIELDS = List.of(
      "imageCid", "imageCID", "image.cid", "profilePicture*", "mediaId", "mediaIds", "cid",
      "contentCid", "ipfsCid", "mediaCid", "thumbnailCid");
  /** In {@code RELAY_MEDIA_CID_FIELDS}, stands for {@link #DEFAULT_MEDIA_CID_FIELDS}. */
  public static final String DEFAULT_FIELDS_TOKEN = "default";

  static final long MAX_TIMEOUT_MS = 3_600_000;
  static final long MAX_COOLDOWN_MS = 86_400_000;
  static final int MAX_SLOTS = 64;

  private static final Pattern FIELD = Pattern.compile(
      "[A-Za-z_$][A-Za-z0-9_$-]*(\\.[A-Za-z_$][A-Za-z0-9_$-]*)*\\*?");

  public SyncConfig {
    Checks.millis("RELAY_PINNING_SYNC_TIMEOUT_MS", pinningSyncTimeout, 1, MAX_TIMEOUT_MS);
    Checks.millis("RELAY_ORBITDB_SYNC_COOLDOWN_MS", syncCooldown, 0, MAX_COOLDOWN_MS);
    Checks.intRange("RELAY_SYNC_SLOTS", slots, 1, MAX_SLOTS);
    if (mediaCidFields.isEmpty()) {
      throw InvalidConfigException.badValue("RELAY_MEDIA_CID_FIELDS", "", "a list of field names");
    }
    for (final String field : mediaCidFields) {
      if (!FIELD.matcher(field).matches()) {
        throw InvalidConfigException.badValue("RELAY_MEDIA_CID_FIELDS", field,
            "a field name (letters, digits, '_', '$', '-'; dotted paths; optional trailing '*')");
      }
    }
    mediaCidFields = List.copyOf(mediaCidFields);
    java.util.Objects.requireNonNull(topicPolicy, "topicPolicy");
  }
}
