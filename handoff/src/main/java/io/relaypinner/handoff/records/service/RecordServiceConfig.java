package io.relaypinner.handoff.records.service;

import io.relaypinner.handoff.records.MessageVerifier;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the embedded record service ({@code relay-pinner records serve}). Immutable; build
 * with {@link #builder()}, which validates every value.
 *
 * @param host listen host
 * @param port listen port, 0 for an ephemeral one
 * @param maxBodyBytes largest request body; more is answered 413 {@code payload_too_large}
 * @param maxItemContentBytes largest {@code item_content} of a message (413 too)
 * @param idleTimeout a connection with no read or write for this long is closed
 * @param requestTimeout a request (head and body) must arrive whole within this long
 * @param maxPagination largest page of {@code posts.json} ({@code pagination=0} means this)
 * @param maxMessages most messages kept (507 {@code store_full} beyond)
 * @param workQueue requests waiting for the worker before new ones get 503 {@code busy}
 */
public record RecordServiceConfig(String host, int port, int maxBodyBytes,
    int maxItemContentBytes, Duration idleTimeout, Duration requestTimeout, int maxPagination,
    long maxMessages, int workQueue) {
  /**
   * Loopback, port 8181, 256 KiB bodies, 128 KiB item contents, 30 s idle, 30 s per request,
   * pages of 200, 100 000 messages, 256 queued requests.
   */
  public static final RecordServiceConfig DEFAULT = builder().build();

  public RecordServiceConfig {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(idleTimeout, "idleTimeout");
    Objects.requireNonNull(requestTimeout, "requestTimeout");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port must be 0-65535, got " + port);
    }
    if (maxBodyBytes < 1024) {
      throw new IllegalArgumentException("maxBodyBytes must be at least 1024");
    }
    if (maxItemContentBytes < 1 || maxItemContentBytes > maxBodyBytes) {
      throw new IllegalArgumentException("maxItemContentBytes must be 1..maxBodyBytes");
    }
    if (idleTimeout.isNegative() || idleTimeout.isZero()) {
      throw new IllegalArgumentException("idleTimeout must be positive");
    }
    if (requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new IllegalArgumentException("requestTimeout must be positive");
    }
    if (maxPagination < 1 || maxMessages < 1 || workQueue < 1) {
      throw new IllegalArgumentException("maxPagination, maxMessages, workQueue must be positive");
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from these values. */
  public Builder toBuilder() {
    return new Builder().host(host).port(port).maxBodyBytes(maxBodyBytes)
        .maxItemContentBytes(maxItemContentBytes).idleTimeout(idleTimeout)
        .requestTimeout(requestTimeout).maxPagination(maxPagination).maxMessages(maxMessages)
        .workQueue(workQueue);
  }

  /** Builds a {@link RecordServiceConfig}. */
  public static final class Builder {
    private String host = "127.0.0.1";
    private int port = 8181;
    private int maxBodyBytes = 256 * 1024;
    private int maxItemContentBytes = MessageVerifier.DEFAULT_MAX_ITEM_CONTENT_BYTES;
    private Duration idleTimeout = Duration.ofSeconds(30);
    private Duration requestTimeout = Duration.ofSeconds(30);
    private int maxPagination = 200;
    private long maxMessages = 100_000;
    private int workQueue = 256;

    private Builder() {}

    public Builder host(final String value) {
      this.host = value;
      return this;
    }

    public Builder port(final int value) {
      this.port = value;
      return this;
    }

    public Builder maxBodyBytes(final int value) {
      this.maxBodyBytes = value;
      return this;
    }

    public Builder maxItemContentBytes(final int value) {
      this.maxItemContentBytes = value;
      return this;
    }

    public Builder idleTimeout(final Duration value) {
      this.idleTimeout = value;
      return this;
    }

    public Builder requestTimeout(final Duration value) {
      this.requestTimeout = value;
      return this;
    }

    public Builder maxPagination(final int value) {
      this.maxPagination = value;
      return this;
    }

    public Builder maxMessages(final long value) {
      this.maxMessages = value;
      return this;
    }

    public Builder workQueue(final int value) {
      this.workQueue = value;
      return this;
    }

    /**
     * @throws IllegalArgumentException naming the bad value
     */
    public RecordServiceConfig build() {
      return new RecordServiceConfig(host, port, maxBodyBytes, maxItemContentBytes, idleTimeout,
          requestTimeout, maxPagination, maxMessages, workQueue);
    }
  }
}
