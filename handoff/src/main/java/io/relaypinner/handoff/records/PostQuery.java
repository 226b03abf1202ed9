package io.relaypinner.handoff.records;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A query of {@code GET /api/v0/posts.json}: each filter is a list of accepted values (any of
 * them matches; an empty list does not filter), and all filters must match. {@code types} match
 * the post type, {@code refs} the ref, {@code addresses} the owner (case-insensitive),
 * {@code channels} the channel, {@code hashes} the item hash. Newest first unless
 * {@code oldestFirst}; pages of {@code pagination} posts, numbered from 1.
 */
public record PostQuery(List<String> types, List<String> refs, List<String> addresses,
    List<String> channels, List<String> hashes, int page, int pagination, boolean oldestFirst) {
  /** Aleph's default page size. */
  public static final int DEFAULT_PAGINATION = 20;

  public PostQuery {
    types = List.copyOf(types);
    refs = List.copyOf(refs);
    addresses = List.copyOf(addresses);
    channels = List.copyOf(channels);
    hashes = List.copyOf(hashes);
    if (page < 1) {
      throw new IllegalArgumentException("page starts at 1, got " + page);
    }
    if (pagination < 1) {
      throw new IllegalArgumentException("pagination must be positive, got " + pagination);
    }
  }

  /** A builder with no filters, page 1 of 20, newest first. */
  public static Builder builder() {
    return new Builder();
  }

  /** The query string (without {@code ?}) in Aleph's parameter names. */
  public String toQueryString() {
    final List<String> parts = new ArrayList<>();
    add(parts, "types", types);
    add(parts, "refs", refs);
    add(parts, "addresses", addresses);
    add(parts, "channels", channels);
    add(parts, "hashes", hashes);
    parts.add("pagination=" + pagination);
    parts.add("page=" + page);
    parts.add("sortOrder=" + (oldestFirst ? "1" : "-1"));
    return String.join("&", parts);
  }

  private static void add(final List<String> parts, final String name, final List<String> values) {
    if (!values.isEmpty()) {
      parts.add(name + "=" + URLEncoder.encode(String.join(",", values), StandardCharsets.UTF_8));
    }
  }

  /**
   * Reads decoded query parameters (the service's side). Lists are comma-separated, repeated
   * parameters add up.
   *
   * @param maxPagination the largest page size served; {@code pagination=0} (Aleph: no limit)
   *     means this
   * @throws RecordRejectedException 400 {@code invalid_query} for a bad number
   */
  public static PostQuery fromParameters(final Map<String, List<String>> parameters,
      final int maxPagination) {
    final Builder builder = builder()
        .types(list(parameters, "types"))
        .refs(list(parameters, "refs"))
        .addresses(list(parameters, "addresses"))
        .channels(list(parameters, "channels"))
        .hashes(list(parameters, "hashes"));
    final int pagination = integer(parameters, "pagination", DEFAULT_PAGINATION);
    if (pagination < 0) {
      throw badQuery("pagination must be 0 or more");
    }
    builder.pagination(pagination == 0 ? maxPagination : Math.min(pagination, maxPagination));
    final int page = integer(parameters, "page", 1);
    if (page < 1) {
      throw badQuery("page starts at 1");
    }
    builder.page(page);
    final int sortOrder = integer(parameters, "sortOrder", -1);
    if (sortOrder != 1 && sortOrder != -1) {
      throw badQuery("sortOrder must be -1 (newest first) or 1 (oldest first)");
    }
    if (sortOrder == 1) {
      builder.oldestFirst();
    }
    return builder.build();
  }

  private static List<String> list(final Map<String, List<String>> parameters,
      final String name) {
    final List<String> out = new ArrayList<>();
    for (final String value : parameters.getOrDefault(name, List.of())) {
      for (final String part : value.split(",")) {
        if (!part.isEmpty()) {
          out.add(part);
        }
      }
    }
    return out;
  }

  private static int integer(final Map<String, List<String>> parameters, final String name,
      final int fallback) {
    final List<String> values = parameters.getOrDefault(name, List.of());
    if (values.isEmpty()) {
      return fallback;
    }
    try {
      return Integer.parseInt(values.get(values.size() - 1).trim());
    } catch (final NumberFormatException e) {
      throw badQuery(name + " must be an integer");
    }
  }

  private static RecordRejectedException badQuery(final String message) {
    return new RecordRejectedException(400, ErrorCodes.INVALID_QUERY, message);
  }

  /** Builds a {@link PostQuery}. */
  public static final class Builder {
    private List<String> types = List.of();
    private List<String> refs = List.of();
    private List<String> addresses = List.of();
    private List<String> channels = List.of();
    private List<String> hashes = List.of();
    private int page = 1;
    private int pagination = DEFAULT_PAGINATION;
    private boolean oldestFirst;

    private Builder() {}

    public Builder types(final List<String> values) {
      this.types = Objects.requireNonNull(values);
      return this;
    }

    public Builder types(final String... values) {
      return types(List.of(values));
    }

    public Builder refs(final List<String> values) {
      this.refs = Objects.requireNonNull(values);
      return this;
    }

    public Builder refs(final String... values) {
      return refs(List.of(values));
    }

    public Builder addresses(final List<String> values) {
      this.addresses = Objects.requireNonNull(values);
      return this;
    }

    public Builder addresses(final String... values) {
      return addresses(List.of(values));
    }

    public Builder channels(final List<String> values) {
      this.channels = Objects.requireNonNull(values);
      return this;
    }

    public Builder channels(final String... values) {
      return channels(List.of(values));
    }

    public Builder hashes(final List<String> values) {
      this.hashes = Objects.requireNonNull(values);
      return this;
    }

    public Builder hashes(final String... values) {
      return hashes(List.of(values));
    }

    public Builder page(final int value) {
      this.page = value;
      return this;
    }

    public Builder pagination(final int value) {
      this.pagination = value;
      return this;
    }

    public Builder oldestFirst() {
      this.oldestFirst = true;
      return this;
    }

    public PostQuery build() {
      return new PostQuery(types, refs, addresses, channels, hashes, page, pagination,
          oldestFirst);
    }
  }
}
