package io.relaypinner.relay.config;

import io.relaypinner.libp2p.protocol.relay.CircuitRelayConfig;
import java.time.Duration;
import java.util.List;

/**
 * Circuit relay v2 and pubsub peer discovery, as the JavaScript relay configures them
 * (CONTRACT.md "Milestone 2 names": {@code RELAY_CIRCUIT_HOP_TIMEOUT_MS},
 * {@code RELAY_CIRCUIT_MAX_RESERVATIONS}, {@code RELAY_CIRCUIT_RESERVATION_TTL_MS},
 * {@code RELAY_CIRCUIT_DEFAULT_DATA_LIMIT_BYTES}, {@code RELAY_CIRCUIT_DEFAULT_DURATION_LIMIT_MS},
 * {@code PUBSUB_TOPICS}).
 *
 * @param relay the hop service's limits (zero = unlimited for reservations, TTL, data, duration)
 * @param discoveryTopics the pubsub peer-discovery topics the relay joins and announces itself on
 * @param discoveryInterval how often the relay announces itself there
 */
public record CircuitConfig(CircuitRelayConfig relay, List<String> discoveryTopics,
    Duration discoveryInterval) {
  /** The JavaScript relay's default topic. */
  public static final String DEFAULT_DISCOVERY_TOPIC = "todo._peer-discovery._p2p._pubsub";
  public static final Duration DEFAULT_DISCOVERY_INTERVAL = Duration.ofSeconds(5);
  static final long MAX_HOP_TIMEOUT_MS = CircuitRelayConfig.MAX_TIMEOUT.toMillis();
  static final long MAX_TTL_MS = CircuitRelayConfig.MAX_RESERVATION_TTL.toMillis();
  static final long MAX_DURATION_MS = CircuitRelayConfig.MAX_DURATION_LIMIT.toMillis();
  static final int MAX_TOPICS = 16;
  static final int MAX_TOPIC_LENGTH = 256;

  public CircuitConfig {
    if (discoveryTopics.size() > MAX_TOPICS) {
      throw InvalidConfigException.badValue("PUBSUB_TOPICS", String.join(",", discoveryTopics),
          "at most " + MAX_TOPICS + " topics");
    }
    for (final String topic : discoveryTopics) {
      if (topic.length() > MAX_TOPIC_LENGTH || topic.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
        throw InvalidConfigException.badValue("PUBSUB_TOPICS", topic,
            "topic names of printable ASCII without spaces, at most " + MAX_TOPIC_LENGTH
                + " characters");
      }
    }
    discoveryTopics = List.copyOf(discoveryTopics);
    Checks.millis("discoveryInterval", discoveryInterval, 1_000, 3_600_000);
  }
}
