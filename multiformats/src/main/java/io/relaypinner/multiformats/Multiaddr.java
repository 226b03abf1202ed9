package io.relaypinner.multiformats;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A multiaddr as specified by {@code multiformats/multiaddr} ({@code README.md},
 * "Specification"): text {@code /name/value/name/value…}, binary a sequence of {@code
 * varint(code) ‖ value} with a varint length before variable values. The protocols are those of
 * {@link MultiaddrProtocol}; anything else is refused with a message naming the code or name.
 *
 * <p>Immutable. Limits: binary at most {@value #MAX_BYTES} bytes, text at most {@value
 * #MAX_TEXT_LENGTH} characters; every length prefix is checked against what remains. Text may end
 * with one {@code /}; empty segments are refused. {@code /} is the empty multiaddr. Equality is by
 * binary form.
 */
public final class Multiaddr {
  /** Largest binary multiaddr accepted (and built). */
  public static final int MAX_BYTES = 1024;

  /** Longest text {@link #parse} accepts. */
  public static final int MAX_TEXT_LENGTH = 4096;

  /** The multiaddr with no components, text {@code /}. */
  public static final Multiaddr EMPTY = new Multiaddr(List.of(), new byte[0]);

  private final List<MultiaddrComponent> components;
  private final byte[] bytes;

  private Multiaddr(final List<MultiaddrComponent> components, final byte[] bytes) {
    this.components = components;
    this.bytes = bytes;
  }

  /**
   * A multiaddr of these components.
   *
   * @throws MultiformatException when the binary form would exceed {@value #MAX_BYTES} bytes
   */
  public static Multiaddr of(final List<MultiaddrComponent> components) {
    final List<MultiaddrComponent> copy = List.copyOf(components);
    int length = 0;
    for (final MultiaddrComponent c : copy) {
      length += c.encodedLength();
      if (length > MAX_BYTES) {
        throw new MultiformatException(
            "multiaddr longer than " + MAX_BYTES + " bytes in binary");
      }
    }
    final byte[] out = new byte[length];
    int pos = 0;
    for (final MultiaddrComponent c : copy) {
      pos += c.write(out, pos);
    }
    return new Multiaddr(copy, out);
  }

  /** A multiaddr of these components. */
  public static Multiaddr of(final MultiaddrComponent... components) {
    return of(List.of(components));
  }

  /**
   * Parses multiaddr text such as {@code /ip4/192.0.2.42/tcp/443/p2p/12D3KooW…}.
   *
   * @throws MultiformatException naming the protocol and position of the first problem
   */
  public static Multiaddr parse(final String text) {
    if (text.length() > MAX_TEXT_LENGTH) {
      throw new MultiformatException(
          "multiaddr text of " + text.length() + " characters exceeds the limit of "
              + MAX_TEXT_LENGTH);
    }
    if (text.isEmpty() || text.charAt(0) != '/') {
      throw new MultiformatException("multiaddr text must start with '/'");
    }
    // One trailing slash is tolerated, as JavaScript multiaddr does.
    if (text.length() > 1 && text.endsWith("//")) {
      throw new MultiformatException("empty protocol name at position " + (text.length() - 1));
    }
    final int end = text.length() > 1 && text.endsWith("/") ? text.length() - 1 : text.length();
    final List<MultiaddrComponent> components = new ArrayList<>();
    int pos = 1;
    while (pos < end) {
      final int nameEnd = segmentEnd(text, pos, end);
      final String name = text.substring(pos, nameEnd);
      if (name.isEmpty()) {
        throw new MultiformatException("empty protocol name at position " + pos);
      }
      final MultiaddrProtocol protocol = MultiaddrProtocol.forName(name).orElseThrow(
          () -> new MultiformatException(
              "unknown multiaddr protocol '" + Chars.abbreviate(name, 64) + "' at position "
                  + (nameEnd - name.length())));
      pos = nameEnd + 1;
      if (!protocol.hasValue()) {
        components.add(MultiaddrComponent.of(protocol));
        continue;
      }
      if (nameEnd >= end) {
        throw new MultiformatException(
            "missing value for /" + name + " at position " + nameEnd);
      }
      final int valueEnd = segmentEnd(text, pos, end);
      final String value = text.substring(pos, valueEnd);
      if (value.isEmpty()) {
        throw new MultiformatException("empty value for /" + name + " at position " + pos);
      }
      try {
        components.add(MultiaddrComponent.of(protocol, value));
      } catch (final MultiformatException e) {
        throw new MultiformatException(e.getMessage() + " at position " + pos, e);
      }
      pos = valueEnd + 1;
    }
    return of(components);
  }

  private static int segmentEnd(final String text, final int from, final int end) {
    final int slash = text.indexOf('/', from);
    return slash < 0 || slash > end ? end : slash;
  }

  /**
   * Decodes a binary multiaddr.
   *
   * @throws MultiformatException for an unknown protocol code (named in the message), a truncated
   *     or oversized value, an invalid value, or more than {@value #MAX_BYTES} bytes
   */
  public static Multiaddr fromBytes(final byte[] bytes) {
    if (bytes.length > MAX_BYTES) {
      throw new MultiformatException(
          "multiaddr of " + bytes.length + " bytes exceeds the limit of " + MAX_BYTES);
    }
    final List<MultiaddrComponent> components = new ArrayList<>();
    int pos = 0;
    while (pos < bytes.length) {
      final long code = Uvarint.read(bytes, pos, bytes.length);
      final int start = pos;
      final MultiaddrProtocol protocol = MultiaddrProtocol.forCode(code).orElseThrow(
          () -> new MultiformatException(
              "unknown multiaddr protocol code " + code + " (0x" + Long.toHexString(code)
                  + ") at offset " + start));
      pos += Uvarint.size(code);
      final int length;
      if (protocol.isVariable()) {
        final long declared = Uvarint.read(bytes, pos, bytes.length);
        if (declared > bytes.length - pos - Uvarint.size(declared)) {
          throw new MultiformatException(
              "/" + protocol.protocolName() + " at offset " + start + " declares a value of "
                  + declared + " bytes but " + (bytes.length - pos - Uvarint.size(declared))
                  + " remain");
        }
        pos += Uvarint.size(declared);
        length = (int) declared;
      } else {
        length = protocol.sizeBits() / 8;
        if (length > bytes.length - pos) {
          throw new MultiformatException(
              "truncated /" + protocol.protocolName() + " value at offset " + pos + ": needs "
                  + length + " bytes, " + (bytes.length - pos) + " remain");
        }
      }
      try {
        components.add(
            new MultiaddrComponent(protocol, Arrays.copyOfRange(bytes, pos, pos + length)));
      } catch (final MultiformatException e) {
        throw new MultiformatException(e.getMessage() + " at offset " + start, e);
      }
      pos += length;
    }
    return new Multiaddr(List.copyOf(components), bytes.clone());
  }

  /** The components, in order (unmodifiable). */
  public List<MultiaddrComponent> components() {
    return components;
  }

  /** Whether there are no components. */
  public boolean isEmpty() {
    return components.isEmpty();
  }

  /** A copy of the binary form. */
  public byte[] bytes() {
    return bytes.clone();
  }

  /** Whether some component has this protocol. */
  public boolean has(final MultiaddrProtocol protocol) {
    return first(protocol).isPresent();
  }

  /** The first component with this protocol. */
  public Optional<MultiaddrComponent> first(final MultiaddrProtocol protocol) {
    return components.stream().filter(c -> c.protocol() == protocol).findFirst();
  }

  /** The text value of the first component with this protocol, e.g. the tcp port. */
  public Optional<String> valueOf(final MultiaddrProtocol protocol) {
    return first(protocol).map(MultiaddrComponent::valueText);
  }

  /**
   * The peer ID of the last {@code /p2p} component, which names the peer the address reaches (in
   * {@code …/p2p/relay/p2p-circuit/p2p/target} it is the target).
   */
  public Optional<PeerId> peerId() {
    for (int i = components.size() - 1; i >= 0; i--) {
      if (components.get(i).protocol() == MultiaddrProtocol.P2P) {
        return Optional.of(components.get(i).peerId());
      }
    }
    return Optional.empty();
  }

  /** This address followed by {@code other}. */
  public Multiaddr encapsulate(final Multiaddr other) {
    final List<MultiaddrComponent> all = new ArrayList<>(components);
    all.addAll(other.components);
    return of(all);
  }

  /** This address followed by the parsed {@code other}. */
  public Multiaddr encapsulate(final String other) {
    return encapsulate(parse(other));
  }

  /** This address followed by one component. */
  public Multiaddr with(final MultiaddrComponent component) {
    final List<MultiaddrComponent> all = new ArrayList<>(components);
    all.add(component);
    return of(all);
  }

  /** This address followed by {@code /protocol/value}. */
  public Multiaddr with(final MultiaddrProtocol protocol, final String value) {
    return with(MultiaddrComponent.of(protocol, value));
  }

  /**
   * This address ending in {@code /p2p/<peerId>}: itself when it already ends so, else with the
   * component appended.
   *
   * @throws MultiformatException when it already ends with another peer's {@code /p2p}
   */
  public Multiaddr withPeerId(final PeerId peerId) {
    if (!components.isEmpty()) {
      final MultiaddrComponent last = components.get(components.size() - 1);
      if (last.protocol() == MultiaddrProtocol.P2P) {
        if (last.peerId().equals(peerId)) {
          return this;
        }
        throw new MultiformatException(
            "multiaddr " + this + " already ends with another peer ID");
      }
    }
    return with(MultiaddrComponent.p2p(peerId));
  }

  /** This address without a final {@code /p2p} component (itself when there is none). */
  public Multiaddr withoutPeerId() {
    if (!components.isEmpty()
        && components.get(components.size() - 1).protocol() == MultiaddrProtocol.P2P) {
      return of(components.subList(0, components.size() - 1));
    }
    return this;
  }

  /**
   * The components before the last occurrence of {@code protocol} (itself when it does not
   * occur), like JavaScript's {@code decapsulateCode}.
   */
  public Multiaddr decapsulate(final MultiaddrProtocol protocol) {
    for (int i = components.size() - 1; i >= 0; i--) {
      if (components.get(i).protocol() == protocol) {
        return of(components.subList(0, i));
      }
    }
    return this;
  }

  /**
   * The components before the last occurrence of the sequence {@code suffix}.
   *
   * @throws MultiformatException when {@code suffix} does not occur
   */
  public Multiaddr decapsulate(final Multiaddr suffix) {
    final int n = suffix.components.size();
    for (int i = components.size() - n; i >= 0; i--) {
      if (components.subList(i, i + n).equals(suffix.components)) {
        return of(components.subList(0, i));
      }
    }
    throw new MultiformatException("multiaddr " + this + " does not contain " + suffix);
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof Multiaddr other && Arrays.equals(other.bytes, bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  /** The text form, e.g. {@code /ip4/192.0.2.42/tcp/443}; {@code /} when empty. */
  @Override
  public String toString() {
    if (components.isEmpty()) {
      return "/";
    }
    final StringBuilder sb = new StringBuilder();
    for (final MultiaddrComponent c : components) {
      sb.append(c);
    }
    return sb.toString();
  }
}
