package io.relaypinner.relay.gateway;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What an {@code /ipfs/} request asks for under the trustless gateway spec
 * (specs.ipfs.tech/http-gateways/trustless-gateway): plain file bytes (spec 4.6, the default), a
 * raw block ({@code application/vnd.ipld.raw}, {@code ?format=raw}) or a CAR v1
 * ({@code application/vnd.ipld.car}, {@code ?format=car}) with {@code dag-scope},
 * {@code entity-bytes}, {@code order} and {@code dups}. {@code format} wins over {@code Accept};
 * an {@code Accept} naming neither type (a browser's {@code text/html}, {@code *}{@code /*})
 * keeps the plain answer. Pure parsing, no I/O.
 *
 * @param entityBytes the {@code entity-bytes} range, which implies {@code dag-scope=entity}
 */
public record TrustlessRequest(Kind kind, Scope scope, Optional<EntityBytes> entityBytes,
    boolean dups) {
  /** The answer's form. */
  public enum Kind { PLAIN, RAW, CAR }

  /** {@code dag-scope}. */
  public enum Scope { ALL, ENTITY, BLOCK }

  public static final String RAW_TYPE = "application/vnd.ipld.raw";
  public static final String CAR_TYPE = "application/vnd.ipld.car";

  /** The plain answer of spec 4.6. */
  public static final TrustlessRequest PLAIN =
      new TrustlessRequest(Kind.PLAIN, Scope.ALL, Optional.empty(), false);

  /** A request the spec says to refuse with 400; {@code code} is the JSON error code. */
  public static final class BadRequest extends Exception {
    private static final long serialVersionUID = 1L;
    private final String code;

    BadRequest(final String code, final String message) {
      super(message, null, false, false);
      this.code = code;
    }

    public String code() {
      return code;
    }
  }

  /**
   * {@code entity-bytes=from:to}: inclusive offsets; {@code to} empty is {@code *} (end of
   * file); negative values count from the end.
   */
  public record EntityBytes(long from, Optional<Long> to) {
    /** Validates. */
    public EntityBytes {
      Objects.requireNonNull(to, "to");
    }

    /**
     * The half-open span {@code [start, end)} this range covers in an entity of {@code size}
     * bytes, clamped to it; empty when the span is empty.
     *
     * @throws BadRequest when the range lies wholly outside a non-empty entity
     */
    public Optional<long[]> resolve(final long size) throws BadRequest {
      long start = from < 0 ? Math.max(0, size + from) : from;
      long last = to.isEmpty() ? size - 1 : to.get() < 0 ? size + to.get() : to.get();
      if (size > 0 && start >= size) {
        throw new BadRequest("range_not_satisfiable", "entity-bytes " + text()
            + " starts after the entity's " + size + " bytes");
      }
      last = Math.min(last, size - 1);
      if (last < start) {
        return Optional.empty();
      }
      return Optional.of(new long[] {start, last + 1});
    }

    /** As in the query, for ETags and messages. */
    public String text() {
      return from + ":" + to.map(String::valueOf).orElse("*");
    }

    static EntityBytes parse(final String text) throws BadRequest {
      final int colon = text.indexOf(':');
      if (colon <= 0 || colon == text.length() - 1) {
        throw new BadRequest("invalid_entity_bytes",
            "entity-bytes must be from:to (integers, to may be *): " + text);
      }
      try {
        final long from = Long.parseLong(text.substring(0, colon));
        final String toText = text.substring(colon + 1);
        final Optional<Long> to = "*".equals(toText) ? Optional.empty()
            : Optional.of(Long.parseLong(toText));
        if (from >= 0 && to.isPresent() && to.get() >= 0 && to.get() < from) {
          throw new BadRequest("invalid_entity_bytes",
              "entity-bytes ends before it starts: " + text);
        }
        return new EntityBytes(from, to);
      } catch (final NumberFormatException e) {
        throw new BadRequest("invalid_entity_bytes",
            "entity-bytes must be from:to (integers, to may be *): " + text);
      }
    }
  }

  /** Validates. */
  public TrustlessRequest {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(entityBytes, "entityBytes");
  }

  /**
   * Reads the request's {@code Accept} header (may be null) and query parameters.
   *
   * @throws BadRequest on an unknown {@code format}, a CAR version other than 1, or a bad
   *     {@code dag-scope}, {@code entity-bytes}, {@code order} or {@code dups}
   */
  public static TrustlessRequest parse(final String accept,
      final Map<String, List<String>> query) throws BadRequest {
    final Optional<String> format = first(query, "format");
    Kind kind = Kind.PLAIN;
    Map<String, String> carParams = Map.of();
    if (format.isPresent()) {
      kind = switch (format.get()) {
        case "raw" -> Kind.RAW;
        case "car" -> Kind.CAR;
        default -> throw new BadRequest("unsupported_format", "format=" + format.get()
            + " is not served here (raw or car; omit it for the file's bytes)");
      };
    }
    if (accept != null) {
      for (final String item : accept.split(",")) {
        final String[] parts = item.trim().split(";");
        if (parts.length == 0) {
          // ";" alone (split drops trailing empty strings; found by HttpRoutesFuzzer).
          continue;
        }
        final String type = parts[0].trim().toLowerCase(Locale.ROOT);
        if (!RAW_TYPE.equals(type) && !CAR_TYPE.equals(type)) {
          continue;
        }
        final Map<String, String> params = new java.util.HashMap<>();
        for (int i = 1; i < parts.length; i++) {
          final int eq = parts[i].indexOf('=');
          if (eq > 0) {
            params.put(parts[i].substring(0, eq).trim().toLowerCase(Locale.ROOT),
                parts[i].substring(eq + 1).trim());
          }
        }
        if ("0".equals(params.get("q"))) {
          continue;
        }
        if (format.isEmpty()) {
          kind = RAW_TYPE.equals(type) ? Kind.RAW : Kind.CAR;
        }
        if (CAR_TYPE.equals(type)) {
          carParams = params;
        }
        break;
      }
    }
    if (kind != Kind.CAR) {
      for (final String carOnly : List.of("dag-scope", "entity-bytes")) {
        if (kind == Kind.RAW && first(query, carOnly).isPresent()) {
          throw new BadRequest("invalid_query", carOnly + " applies to CAR requests only");
        }
      }
      return kind == Kind.RAW
          ? new TrustlessRequest(Kind.RAW, Scope.BLOCK, Optional.empty(), false) : PLAIN;
    }
    final String version = first(query, "car-version").orElse(carParams.getOrDefault("version",
        "1"));
    if (!"1".equals(version)) {
      throw new BadRequest("unsupported_format", "only CAR version 1 is served, not " + version);
    }
    final String order = first(query, "car-order").orElse(carParams.getOrDefault("order", "dfs"));
    if (!"dfs".equals(order) && !"unk".equals(order)) {
      throw new BadRequest("invalid_query", "order must be dfs or unk, not " + order);
    }
    final String dups = first(query, "car-dups").orElse(carParams.getOrDefault("dups", "n"));
    if (!"y".equals(dups) && !"n".equals(dups)) {
      throw new BadRequest("invalid_query", "dups must be y or n, not " + dups);
    }
    final Optional<String> scopeText = first(query, "dag-scope");
    Scope scope = Scope.ALL;
    if (scopeText.isPresent()) {
      scope = switch (scopeText.get()) {
        case "all" -> Scope.ALL;
        case "entity" -> Scope.ENTITY;
        case "block" -> Scope.BLOCK;
        default -> throw new BadRequest("invalid_query",
            "dag-scope must be all, entity or block, not " + scopeText.get());
      };
    }
    final Optional<String> bytesText = first(query, "entity-bytes");
    Optional<EntityBytes> bytes = Optional.empty();
    if (bytesText.isPresent()) {
      bytes = Optional.of(EntityBytes.parse(bytesText.get()));
      if (scope == Scope.ALL || scopeText.isEmpty()) {
        scope = Scope.ENTITY;
      }
    }
    return new TrustlessRequest(Kind.CAR, scope, bytes, "y".equals(dups));
  }

  private static Optional<String> first(final Map<String, List<String>> query,
      final String name) {
    final List<String> values = query.get(name);
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }
}
