package io.relaypinner.libp2p.protocol.kad;

import java.time.Duration;

/**
 * Parameters and bounds of the Kademlia DHT (libp2p/specs kad-dht/README.md). Protocol constants
 * follow the spec and go-libp2p-kad-dht / js-libp2p @libp2p/kad-dht 16: k = 20, alpha = 3,
 * provider records valid 48 h. Message sizes are ours: the spec allows 4 MiB (go's
 * {@code network.MessageSizeMax}, it-length-prefixed's default in JS), but a request we answer
 * (a key and at most one provider) fits in a few KiB, and an answer of k peers with their
 * addresses in tens of KiB.
 *
 * @param k bucket size, peers returned per answer, replication of provider records
 * @param alpha concurrent requests of one lookup
 * @param maxRequestSize largest request the server reads
 * @param maxResponseSize largest answer the client reads
 * @param maxKeyLength longest DHT key accepted (a multihash: 34 bytes for sha2-256)
 * @param maxPeersPerMessage closer or provider peers read from one message; more are skipped
 * @param maxAddressesPerPeer addresses read per peer; more are skipped
 * @param requestTimeout how long one request to one peer may take (JS: 10 s)
 * @param lookupTimeout how long a whole lookup may take
 * @param streamIdleTimeout how long a server stream may wait for its next request
 * @param peerRequestsPerSecond requests one peer may make per second (token bucket refill)
 * @param peerRequestBurst requests one peer may make at once (bucket size)
 * @param globalRequestsPerSecond requests all peers together may make per second
 * @param maxRatedPeers peers whose request rate is tracked at once (least recent forgotten)
 * @param providerTtl how long a provider record lives without being re-provided
 * @param maxProviderRecords provider records held in all
 * @param maxProvidersPerKey provider records held for one key
 * @param maxKeysPerProvider provider records one providing peer may hold with us
 * @param maxProviderAddresses addresses kept per provider record
 * @param providersPerAnswer providers returned per GET_PROVIDERS answer
 * @param refreshInterval how often a bucket not looked up in is refreshed (go: 10 min)
 * @param maxRefreshCpl the deepest bucket refreshed by a lookup (go: 15; deeper ones are
 *     found by the lookup of our own id)
 */
public record KadConfig(int k, int alpha, int maxRequestSize, int maxResponseSize,
    int maxKeyLength, int maxPeersPerMessage, int maxAddressesPerPeer, Duration requestTimeout,
    Duration lookupTimeout, Duration streamIdleTimeout, int peerRequestsPerSecond,
    int peerRequestBurst, int globalRequestsPerSecond, int maxRatedPeers, Duration providerTtl,
    int maxProviderRecords, int maxProvidersPerKey, int maxKeysPerProvider,
    int maxProviderAddresses, int providersPerAnswer, Duration refreshInterval,
    int maxRefreshCpl) {
  /** The protocol id of the public (Amino) DHT. */
  public static final String PROTOCOL_ID = "/ipfs/kad/1.0.0";

  public static final KadConfig DEFAULT = new KadConfig(20, 3, 16 * 1024, 1024 * 1024, 256, 100,
      32, Duration.ofSeconds(10), Duration.ofSeconds(60), Duration.ofSeconds(30), 10, 50, 1_000,
      4_096, Duration.ofHours(48), 100_000, 64, 1_024, 16, 20, Duration.ofMinutes(10), 15);

  public KadConfig {
    if (k < 1 || alpha < 1 || maxRequestSize < 256 || maxResponseSize < 256
        || maxResponseSize > 2 * 1024 * 1024 || maxKeyLength < 34 || maxPeersPerMessage < k
        || maxAddressesPerPeer < 1 || peerRequestsPerSecond < 1 || peerRequestBurst < 1
        || globalRequestsPerSecond < 1 || maxRatedPeers < 1 || maxProviderRecords < 1
        || maxProvidersPerKey < 1 || maxKeysPerProvider < 1 || maxProviderAddresses < 1
        || providersPerAnswer < 1 || maxRefreshCpl < 0 || maxRefreshCpl >= KadKey.BITS) {
      throw new IllegalArgumentException("kad limits must be positive (and k <= peers/message)");
    }
    for (final Duration d : new Duration[] {requestTimeout, lookupTimeout, streamIdleTimeout,
        providerTtl, refreshInterval}) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("kad durations must be positive: " + d);
      }
    }
  }

  /** The bounds {@link KadCodec} decodes with. */
  public KadCodec.Limits codecLimits() {
    return new KadCodec.Limits(maxKeyLength, maxPeersPerMessage, maxAddressesPerPeer);
  }

  /** A builder starting from {@link #DEFAULT}'s values. */
  public static Builder builder() {
    return new Builder(DEFAULT);
  }

  /** A builder starting from this config. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** Builds a {@link KadConfig}; {@link #build} validates. */
  public static final class Builder {
    private int k;
    private int alpha;
    private int maxRequestSize;
    private int maxResponseSize;
    private int maxKeyLength;
    private int maxPeersPerMessage;
    private int maxAddressesPerPeer;
    private Duration requestTimeout;
    private Duration lookupTimeout;
    private Duration streamIdleTimeout;
    private int peerRequestsPerSecond;
    private int peerRequestBurst;
    private int globalRequestsPerSecond;
    private int maxRatedPeers;
    private Duration providerTtl;
    private int maxProviderRecords;
    private int maxProvidersPerKey;
    private int maxKeysPerProvider;
    private int maxProviderAddresses;
    private int providersPerAnswer;
    private Duration refreshInterval;
    private int maxRefreshCpl;

    private Builder(final KadConfig c) {
      k = c.k;
      alpha = c.alpha;
      maxRequestSize = c.maxRequestSize;
      maxResponseSize = c.maxResponseSize;
      maxKeyLength = c.maxKeyLength;
      maxPeersPerMessage = c.maxPeersPerMessage;
      maxAddressesPerPeer = c.maxAddressesPerPeer;
      requestTimeout = c.requestTimeout;
      lookupTimeout = c.lookupTimeout;
      streamIdleTimeout = c.streamIdleTimeout;
      peerRequestsPerSecond = c.peerRequestsPerSecond;
      peerRequestBurst = c.peerRequestBurst;
      globalRequestsPerSecond = c.globalRequestsPerSecond;
      maxRatedPeers = c.maxRatedPeers;
      providerTtl = c.providerTtl;
      maxProviderRecords = c.maxProviderRecords;
      maxProvidersPerKey = c.maxProvidersPerKey;
      maxKeysPerProvider = c.maxKeysPerProvider;
      maxProviderAddresses = c.maxProviderAddresses;
      providersPerAnswer = c.providersPerAnswer;
      refreshInterval = c.refreshInterval;
      maxRefreshCpl = c.maxRefreshCpl;
    }

    public Builder k(final int value) {
      k = value;
      return this;
    }

    public Builder alpha(final int value) {
      alpha = value;
      return this;
    }

    public Builder maxRequestSize(final int value) {
      maxRequestSize = value;
      return this;
    }

    public Builder maxResponseSize(final int value) {
      maxResponseSize = value;
      return this;
    }

    public Builder maxPeersPerMessage(final int value) {
      maxPeersPerMessage = value;
      return this;
    }

    public Builder maxAddressesPerPeer(final int value) {
      maxAddressesPerPeer = value;
      return this;
    }

    public Builder requestTimeout(final Duration value) {
      requestTimeout = value;
      return this;
    }

    public Builder lookupTimeout(final Duration value) {
      lookupTimeout = value;
      return this;
    }

    public Builder streamIdleTimeout(final Duration value) {
      streamIdleTimeout = value;
      return this;
    }

    public Builder peerRate(final int perSecond, final int burst) {
      peerRequestsPerSecond = perSecond;
      peerRequestBurst = burst;
      return this;
    }

    public Builder globalRequestsPerSecond(final int value) {
      globalRequestsPerSecond = value;
      return this;
    }

    public Builder maxRatedPeers(final int value) {
      maxRatedPeers = value;
      return this;
    }

    public Builder providerTtl(final Duration value) {
      providerTtl = value;
      return this;
    }

    public Builder providerLimits(final int records, final int perKey, final int perProvider) {
      maxProviderRecords = records;
      maxProvidersPerKey = perKey;
      maxKeysPerProvider = perProvider;
      return this;
    }

    public Builder providersPerAnswer(final int value) {
      providersPerAnswer = value;
      return this;
    }

    public Builder refreshInterval(final Duration value) {
      refreshInterval = value;
      return this;
    }

    public KadConfig build() {
      return new KadConfig(k, alpha, maxRequestSize, maxResponseSize, maxKeyLength,
          maxPeersPerMessage, maxAddressesPerPeer, requestTimeout, lookupTimeout,
          streamIdleTimeout, peerRequestsPerSecond, peerRequestBurst, globalRequestsPerSecond,
          maxRatedPeers, providerTtl, maxProviderRecords, maxProvidersPerKey, maxKeysPerProvider,
          maxProviderAddresses, providersPerAnswer, refreshInterval, maxRefreshCpl);
    }
  }
}
