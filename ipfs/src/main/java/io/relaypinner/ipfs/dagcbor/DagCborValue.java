package io.relaypinner.ipfs.dagcbor;

import io.relaypinner.multiformats.Cid;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * A value of the IPLD data model as DAG-CBOR carries it ({@code ipld/ipld}
 * {@code specs/codecs/dag-cbor/spec.md} and {@code specs/data-model/}): null, boolean, integer,
 * float, string, bytes, link, list and map with string keys.
 *
 * <p>Integers are {@link Int} for the signed 64-bit range and {@link BigInt} only beyond it (CBOR
 * major types 0 and 1 reach -2<sup>64</sup> and 2<sup>64</sup>-1), so each integer has exactly one
 * representation and {@code equals} compares values. Floats are finite doubles (DAG-CBOR has no NaN
 * or infinities). {@link Map} keeps its entries in DAG-CBOR canonical key order whatever order it
 * was built in, so encoding is a straight walk.
 *
 * <p>The {@code asXxx} accessors are for code that expects a shape (OrbitDB entries, manifests):
 * on a value of another kind they throw {@link DagCborException}, the same exception as malformed
 * bytes, since both mean the remote sent something unusable.
 */
public sealed interface DagCborValue
    permits DagCborValue.Null,
        DagCborValue.Bool,
        DagCborValue.Int,
        DagCborValue.BigInt,
        DagCborValue.Float,
        DagCborValue.Text,
        DagCborValue.Bytes,
        DagCborValue.Link,
        DagCborValue.List,
        DagCborValue.Map {

  /** The IPLD data model kinds. */
  enum Kind {
    NULL,
    BOOLEAN,
    INTEGER,
    FLOAT,
    STRING,
    BYTES,
    LINK,
    LIST,
    MAP
  }

  /** This value's data model kind ({@link Int} and {@link BigInt} are both INTEGER). */
  Kind kind();

  /** Whether this is {@link Null}. */
  default boolean isNull() {
    return kind() == Kind.NULL;
  }

  /** This map, or throws {@link DagCborException}. */
  default Map asMap() {
    throw wrongKind(this, Kind.MAP);
  }

  /** This list, or throws {@link DagCborException}. */
  default List asList() {
    throw wrongKind(this, Kind.LIST);
  }

  /** The CID of this link, or throws {@link DagCborException}. */
  default Cid asLink() {
    throw wrongKind(this, Kind.LINK);
  }

  /** The text of this string, or throws {@link DagCborException}. */
  default String asText() {
    throw wrongKind(this, Kind.STRING);
  }

  /** A copy of these bytes, or throws {@link DagCborException}. */
  default byte[] asBytes() {
    throw wrongKind(this, Kind.BYTES);
  }

  /** This boolean, or throws {@link DagCborException}. */
  default boolean asBoolean() {
    throw wrongKind(this, Kind.BOOLEAN);
  }

  /** This integer if it fits a long, or throws {@link DagCborException}. */
  default long asLong() {
    throw wrongKind(this, Kind.INTEGER);
  }

  /** This integer, or throws {@link DagCborException}. */
  default BigInteger asBigInteger() {
    throw wrongKind(this, Kind.INTEGER);
  }

  /** This float, or throws {@link DagCborException}; integers are not converted. */
  default double asDouble() {
    throw wrongKind(this, Kind.FLOAT);
  }

  /** The null value. */
  static Null nullValue() {
    return Null.INSTANCE;
  }

  /** A boolean. */
  static Bool of(final boolean value) {
    return value ? Bool.TRUE : Bool.FALSE;
  }

  /** An integer. */
  static Int of(final long value) {
    return new Int(value);
  }

  /**
   * An integer: {@link Int} when it fits a long, else {@link BigInt}.
   *
   * @throws DagCborException outside -2<sup>64</sup> .. 2<sup>64</sup>-1
   */
  static DagCborValue integer(final BigInteger value) {
    return value.bitLength() < Long.SIZE ? new Int(value.longValue()) : new BigInt(value);
  }

  /**
   * A float.
   *
   * @throws DagCborException for NaN and infinities
   */
  static Float of(final double value) {
    return new Float(value);
  }

  /** A string. */
  static Text of(final String value) {
    return new Text(value);
  }

  /** Bytes (copied). */
  static Bytes of(final byte[] value) {
    return Bytes.copyOf(value);
  }

  /** A link. */
  static Link of(final Cid cid) {
    return new Link(cid);
  }

  /** A list. */
  static List list(final DagCborValue... items) {
    return new List(java.util.List.of(items));
  }

  /** A list. */
  static List list(final java.util.List<? extends DagCborValue> items) {
    return new List(java.util.List.copyOf(items));
  }

  /**
   * A map, reordered canonically.
   *
   * @throws DagCborException when a key holds an unpaired surrogate
   */
  static Map map(final java.util.Map<String, ? extends DagCborValue> entries) {
    return Map.of(entries);
  }

  private static DagCborException wrongKind(final DagCborValue value, final Kind expected) {
    return new DagCborException(
        "expected " + expected.name().toLowerCase(Locale.ROOT) + ", found "
            + value.kind().name().toLowerCase(Locale.ROOT));
  }

  /** Null. */
  record Null() implements DagCborValue {
    /** The instance {@link DagCborValue#nullValue()} returns; all instances are equal. */
    public static final Null INSTANCE = new Null();

    @Override
    public Kind kind() {
      return Kind.NULL;
    }
  }

  /** A boolean. */
  record Bool(boolean value) implements DagCborValue {
    /** True. */
    public static final Bool TRUE = new Bool(true);

    /** False. */
    public static final Bool FALSE = new Bool(false);

    @Override
    public Kind kind() {
      return Kind.BOOLEAN;
    }

    @Override
    public boolean asBoolean() {
      return value;
    }
  }

  /** An integer in the signed 64-bit range. */
  record Int(long value) implements DagCborValue {
    @Override
    public Kind kind() {
      return Kind.INTEGER;
    }

    @Override
    public long asLong() {
      return value;
    }

    @Override
    public BigInteger asBigInteger() {
      return BigInteger.valueOf(value);
    }
  }

  /**
   * An integer outside the signed 64-bit range but inside CBOR's: -2<sup>64</sup> ..
   * -2<sup>63</sup>-1 and 2<sup>63</sup> .. 2<sup>64</sup>-1. JS decodes these as BigInt.
   */
  record BigInt(BigInteger value) implements DagCborValue {
    private static final BigInteger MIN = BigInteger.ONE.shiftLeft(64).negate();
    private static final BigInteger MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    /**
     * Validates.
     *
     * @throws DagCborException when the value fits a long (use {@link Int}) or CBOR cannot hold it
     */
    public BigInt {
      Objects.requireNonNull(value, "value");
      if (value.bitLength() < Long.SIZE) {
        throw new DagCborException("integer " + value + " fits a long; use Int");
      }
      if (value.compareTo(MIN) < 0 || value.compareTo(MAX) > 0) {
        throw new DagCborException("integer " + value + " is outside the CBOR range");
      }
    }

    @Override
    public Kind kind() {
      return Kind.INTEGER;
    }

    @Override
    public long asLong() {
      throw new DagCborException("integer " + value + " does not fit a long");
    }

    @Override
    public BigInteger asBigInteger() {
      return value;
    }
  }

  /** A finite 64-bit float; equality is bitwise, so 0.0 and -0.0 differ (as their bytes do). */
  record Float(double value) implements DagCborValue {
    /**
     * Validates.
     *
     * @throws DagCborException for NaN and infinities, which DAG-CBOR forbids
     */
    public Float {
      if (!Double.isFinite(value)) {
        throw new DagCborException("DAG-CBOR forbids float " + value);
      }
    }

    @Override
    public Kind kind() {
      return Kind.FLOAT;
    }

    @Override
    public double asDouble() {
      return value;
    }
  }

  /** A string. Strings with unpaired surrogates can be held but not encoded. */
  record Text(String value) implements DagCborValue {
    /** Checks for null. */
    public Text {
      Objects.requireNonNull(value, "value");
    }

    @Override
    public Kind kind() {
      return Kind.STRING;
    }

    @Override
    public String asText() {
      return value;
    }
  }

  /** Bytes; immutable, the array is copied in and out. */
  final class Bytes implements DagCborValue {
    private static final HexFormat HEX = HexFormat.of();
    private final byte[] data;

    private Bytes(final byte[] data) {
      this.data = data;
    }

    /** Bytes holding a copy of {@code data}. */
    public static Bytes copyOf(final byte[] data) {
      return new Bytes(data.clone());
    }

    /** Takes ownership of an array nobody else holds (the decoder's fresh slices). */
    static Bytes wrap(final byte[] data) {
      return new Bytes(data);
    }

    /** The array itself, for the encoder; never handed out. */
    byte[] array() {
      return data;
    }

    /** The number of bytes. */
    public int length() {
      return data.length;
    }

    /** The byte at {@code index}. */
    public byte get(final int index) {
      return data[index];
    }

    /** A copy of the bytes. */
    public byte[] toByteArray() {
      return data.clone();
    }

    @Override
    public Kind kind() {
      return Kind.BYTES;
    }

    @Override
    public byte[] asBytes() {
      return data.clone();
    }

    @Override
    public boolean equals(final Object o) {
      return o instanceof Bytes other && Arrays.equals(data, other.data);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(data);
    }

    @Override
    public String toString() {
      if (data.length <= 64) {
        return "Bytes[" + HEX.formatHex(data) + "]";
      }
      return "Bytes[" + HEX.formatHex(data, 0, 64) + "... (" + data.length + " bytes)]";
    }
  }

  /** A link: CBOR tag 42 over a byte string {@code 0x00 ‖ binary CID}. */
  record Link(Cid cid) implements DagCborValue {
    /** Checks for null. */
    public Link {
      Objects.requireNonNull(cid, "cid");
    }

    @Override
    public Kind kind() {
      return Kind.LINK;
    }

    @Override
    public Cid asLink() {
      return cid;
    }
  }

  /** A list; immutable. */
  record List(java.util.List<DagCborValue> items) implements DagCborValue {
    /** Copies into an immutable list (no copy when it already is one); nulls are refused. */
    public List {
      items = java.util.List.copyOf(items);
    }

    /** The number of items. */
    public int size() {
      return items.size();
    }

    /** The item at {@code index}, or throws {@link DagCborException}. */
    public DagCborValue get(final int index) {
      if (index < 0 || index >= items.size()) {
        throw new DagCborException(
            "list index " + index + " out of range for length " + items.size());
      }
      return items.get(index);
    }

    @Override
    public Kind kind() {
      return Kind.LIST;
    }

    @Override
    public List asList() {
      return this;
    }
  }

  /**
   * A map with string keys, iterated in DAG-CBOR canonical order (shorter UTF-8 key first, then
   * unsigned bytewise); immutable.
   */
  final class Map implements DagCborValue {
    private static final Map EMPTY = new Map(Collections.emptyMap());
    private final java.util.Map<String, DagCborValue> entries;

    private Map(final java.util.Map<String, DagCborValue> entries) {
      this.entries = entries;
    }

    /**
     * A map with the entries of {@code entries} in canonical order.
     *
     * @throws DagCborException when a key holds an unpaired surrogate (it has no UTF-8 form)
     */
    public static Map of(final java.util.Map<String, ? extends DagCborValue> entries) {
      if (entries.isEmpty()) {
        return EMPTY;
      }
      final ArrayList<KeyBytes> keys = new ArrayList<>(entries.size());
      for (final String key : entries.keySet()) {
        keys.add(new KeyBytes(Objects.requireNonNull(key, "key"), Utf8.encode(key)));
      }
      keys.sort((a, b) -> Utf8.compareKeys(a.utf8(), b.utf8()));
      final LinkedHashMap<String, DagCborValue> sorted = new LinkedHashMap<>(keys.size() * 2);
      for (final KeyBytes key : keys) {
        sorted.put(key.key(), Objects.requireNonNull(entries.get(key.key()), "value"));
      }
      return new Map(Collections.unmodifiableMap(sorted));
    }

    /** Takes a map the decoder filled in canonical order and hands to nobody else. */
    static Map wrapCanonical(final LinkedHashMap<String, DagCborValue> entries) {
      return entries.isEmpty() ? EMPTY : new Map(Collections.unmodifiableMap(entries));
    }

    private record KeyBytes(String key, byte[] utf8) {}

    /** The entries, unmodifiable, iterated in canonical key order. */
    public java.util.Map<String, DagCborValue> entries() {
      return entries;
    }

    /** The number of entries. */
    public int size() {
      return entries.size();
    }

    /** Whether {@code key} is present. */
    public boolean containsKey(final String key) {
      return entries.containsKey(key);
    }

    /** The value under {@code key}, or null when absent. */
    public DagCborValue get(final String key) {
      return entries.get(key);
    }

    /** The value under {@code key}, if present. */
    public Optional<DagCborValue> find(final String key) {
      return Optional.ofNullable(entries.get(key));
    }

    /** The value under {@code key}, or throws {@link DagCborException} when it is absent. */
    public DagCborValue require(final String key) {
      final DagCborValue value = entries.get(key);
      if (value == null) {
        throw new DagCborException("map has no key \"" + key + "\"");
      }
      return value;
    }

    @Override
    public Kind kind() {
      return Kind.MAP;
    }

    @Override
    public Map asMap() {
      return this;
    }

    @Override
    public boolean equals(final Object o) {
      return o instanceof Map other && entries.equals(other.entries);
    }

    @Override
    public int hashCode() {
      return entries.hashCode();
    }

    @Override
    public String toString() {
      return "Map" + entries;
    }
  }
}
