package io.relaypinner.relay.replication;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Finds the media CIDs an OrbitDB entry payload refers to ({@code RELAY_MEDIA_CID_FIELDS},
 * notes/orbitdb-wire.md 3.28), so that the relay pins them while the writer is online.
 *
 * <p>The whole payload is walked (events {@code {op:'ADD', value}}, documents and keyvalue
 * {@code {op:'PUT', key, value}} and anything else): a map field named by a configured field
 * (a name, a dotted path like {@code image.cid}, or a prefix ending in {@code *} like
 * {@code profilePicture*}) holds a CID as a string, a list of strings ({@code mediaIds}) or a
 * link; a keyvalue {@code PUT} whose {@code key}, or a record whose {@code _id}, is such a field
 * holds the CID in {@code value}; a string that is a JSON object or array is parsed and walked
 * too, up to {@link #MAX_JSON_DEPTH} strings deep; and every tag-42 link anywhere in the payload
 * counts. Strings in those places that are not CIDs are skipped and counted
 * ({@link Result#invalid()}).
 *
 * <p>Bounded: at most {@link #MAX_NODES} values visited, {@link #MAX_DEPTH} levels, JSON strings
 * up to {@link #MAX_JSON_LENGTH} characters, {@link #MAX_CIDS} CIDs per payload. Thread-safe.
 */
public final class MediaCidExtractor {
  /** How many JSON strings inside JSON strings are parsed. */
  public static final int MAX_JSON_DEPTH = 4;
  /** Longest string parsed as JSON. */
  public static final int MAX_JSON_LENGTH = 64 * 1024;
  /** Values visited per payload. */
  public static final int MAX_NODES = 10_000;
  /** Nesting depth followed per payload (maps and lists). */
  public static final int MAX_DEPTH = 32;
  /** CIDs taken from one payload. */
  public static final int MAX_CIDS = 1_000;

  private static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder()
      .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH)
          .maxStringLength(MAX_JSON_LENGTH).build()).build());

  private final List<Field> fields;

  /** What one payload held. */
  public record Result(Set<Cid> cids, int invalid) {
    public Result {
      cids = Set.copyOf(cids);
    }
  }

  private record Field(String[] path, boolean prefix) {
    boolean matchesKey(final String key) {
      if (path.length != 1) {
        return false;
      }
      return prefix ? key.startsWith(path[0]) : key.equals(path[0]);
    }
  }

  /**
   * @param fields {@code RELAY_MEDIA_CID_FIELDS} as parsed by the configuration (names, dotted
   *     paths, prefixes ending in {@code *})
   */
  public MediaCidExtractor(final List<String> fields) {
    Objects.requireNonNull(fields, "fields");
    final List<Field> parsed = new ArrayList<>();
    for (final String field : fields) {
      final boolean prefix = field.endsWith("*");
      final String name = prefix ? field.substring(0, field.length() - 1) : field;
      parsed.add(new Field(name.split("\\."), prefix));
    }
    this.fields = List.copyOf(parsed);
  }

  /** The media CIDs in an entry payload. */
  public Result extract(final DagCborValue payload) {
    final Walk walk = new Walk();
    walk.cbor(payload, 0, 0);
    return new Result(walk.cids, walk.invalid);
  }

  /** One payload's walk. */
  private final class Walk {
    private final Set<Cid> cids = new LinkedHashSet<>();
    private int invalid;
    private int nodes;

    private boolean budget(final int depth) {
      return ++nodes <= MAX_NODES && depth <= MAX_DEPTH && cids.size() < MAX_CIDS;
    }

    void cbor(final DagCborValue value, final int depth, final int jsonDepth) {
      if (!budget(depth)) {
        return;
      }
      switch (value.kind()) {
        case LINK -> cids.add(value.asLink());
        case LIST -> {
          for (final DagCborValue item : value.asList().items()) {
            cbor(item, depth + 1, jsonDepth);
          }
        }
        case MAP -> cborMap(value.asMap(), depth, jsonDepth);
        case STRING -> jsonString(value.asText(), depth, jsonDepth);
        default -> {
          // numbers, bytes, booleans, null: nothing to find
        }
      }
    }

    private void cborMap(final DagCborValue.Map map, final int depth, final int jsonDepth) {
      // A keyvalue PUT ({op, key, value}) or a record ({_id, value}) named like a media field.
      final String name = text(map.find("_id").orElse(null));
      final String key = text(map.find("key").orElse(null));
      if ((name != null && namedField(name)) || (key != null && namedField(key))) {
        map.find("value").ifPresent(v -> cborCid(v, depth + 1, jsonDepth));
      }
      for (final Field field : fields) {
        if (field.path().length > 1) {
          DagCborValue at = map;
          for (final String segment : field.path()) {
            if (at.kind() != DagCborValue.Kind.MAP) {
              at = null;
              break;
            }
            at = at.asMap().find(segment).orElse(null);
            if (at == null) {
              break;
            }
          }
          if (at != null) {
            cborCid(at, depth + 1, jsonDepth);
          }
        }
      }
      for (final Map.Entry<String, DagCborValue> entry : map.entries().entrySet()) {
        if (namedField(entry.getKey())) {
          cborCid(entry.getValue(), depth + 1, jsonDepth);
        } else {
          cbor(entry.getValue(), depth + 1, jsonDepth);
        }
      }
    }

    /** A value in a media field: a CID string, a list of them, a link, or nested JSON. */
    private void cborCid(final DagCborValue value, final int depth, final int jsonDepth) {
      switch (value.kind()) {
        case STRING -> cidText(value.asText(), depth, jsonDepth);
        case LIST -> {
          for (final DagCborValue item : value.asList().items()) {
            if (budget(depth)) {
              cborCid(item, depth + 1, jsonDepth);
            }
          }
        }
        case NULL -> {
          // an unset field
        }
        default -> cbor(value, depth, jsonDepth);
      }
    }

    private void cidText(final String text, final int depth, final int jsonDepth) {
      final String trimmed = text.trim();
      if (looksLikeJson(trimmed)) {
        jsonString(trimmed, depth, jsonDepth);
        return;
      }
      if (trimmed.isEmpty()) {
        return;
      }
      add(trimmed);
    }

    private void add(final String text) {
      final String cid = text.startsWith("/ipfs/") ? text.substring("/ipfs/".length()) : text;
      try {
        if (cids.size() < MAX_CIDS) {
          cids.add(Cid.parse(cid));
        }
      } catch (final MultiformatException e) {
        invalid++;
      }
    }

    private void jsonString(final String text, final int depth, final int jsonDepth) {
      final String trimmed = text.trim();
      if (!looksLikeJson(trimmed) || jsonDepth >= MAX_JSON_DEPTH
          || trimmed.length() > MAX_JSON_LENGTH) {
        return;
      }
      final JsonNode node;
      try {
        node = JSON.readTree(trimmed);
      } catch (final JsonProcessingException | RuntimeException e) {
        return;
      }
      json(node, depth + 1, jsonDepth + 1);
    }

    private void json(final JsonNode node, final int depth, final int jsonDepth) {
      if (node == null || !budget(depth)) {
        return;
      }
      if (node.isArray()) {
        for (final JsonNode item : node) {
          json(item, depth + 1, jsonDepth);
        }
      } else if (node.isObject()) {
        final String name = node.path("_id").isTextual() ? node.get("_id").asText() : null;
        final String key = node.path("key").isTextual() ? node.get("key").asText() : null;
        if ((name != null && namedField(name)) || (key != null && namedField(key))) {
          jsonCid(node.get("value"), depth + 1, jsonDepth);
        }
        for (final Field field : fields) {
          if (field.path().length > 1) {
            JsonNode at = node;
            for (final String segment : field.path()) {
              at = at == null || !at.isObject() ? null : at.get(segment);
            }
            if (at != null) {
              jsonCid(at, depth + 1, jsonDepth);
            }
          }
        }
        final Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext()) {
          final Map.Entry<String, JsonNode> entry = it.next();
          if (namedField(entry.getKey())) {
            jsonCid(entry.getValue(), depth + 1, jsonDepth);
          } else {
            json(entry.getValue(), depth + 1, jsonDepth);
          }
        }
      } else if (node.isTextual()) {
        jsonString(node.asText(), depth, jsonDepth);
      }
    }

    private void jsonCid(final JsonNode node, final int depth, final int jsonDepth) {
      if (node == null || node.isNull()) {
        return;
      }
      if (node.isTextual()) {
        cidText(node.asText(), depth, jsonDepth);
      } else if (node.isArray()) {
        for (final JsonNode item : node) {
          if (budget(depth)) {
            jsonCid(item, depth + 1, jsonDepth);
          }
        }
      } else {
        json(node, depth, jsonDepth);
      }
    }
  }

  private boolean namedField(final String key) {
    for (final Field field : fields) {
      if (field.matchesKey(key)) {
        return true;
      }
    }
    return false;
  }

  private static String text(final DagCborValue value) {
    return value != null && value.kind() == DagCborValue.Kind.STRING ? value.asText() : null;
  }

  private static boolean looksLikeJson(final String text) {
    return text.length() >= 2 && (text.charAt(0) == '{' || text.charAt(0) == '[');
  }
}
