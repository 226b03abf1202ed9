package io.relaypinner.relay.config;

import io.netty.util.NetUtil;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiaddrProtocol;
import io.relaypinner.multiformats.MultiformatException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Value checks shared by the environment parser and the config records, so that a value fails
 * with the same message whichever way it arrives.
 */
final class Checks {
  static final String PORT = "a port (0-65535)";
  static final String PUBLIC_PORT = "a port (1-65535)";

  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");
  private static final int MAX_HOSTNAME_LENGTH = 253;

  private Checks() {}

  /** A listen port: 0 means ephemeral. */
  static int port(final String variable, final int value) {
    if (value < 0 || value > 65_535) {
      throw InvalidConfigException.badValue(variable, value, PORT);
    }
    return value;
  }

  /** A port others connect to: 0 makes no sense there. */
  static int publicPort(final String variable, final Integer value) {
    if (value != null && (value < 1 || value > 65_535)) {
      throw InvalidConfigException.badValue(variable, value, PUBLIC_PORT);
    }
    return value == null ? 0 : value;
  }

  static int intRange(final String variable, final int value, final int min, final int max) {
    if (value < min || value > max) {
      throw InvalidConfigException.badValue(variable, value, intExpectation(min, max));
    }
    return value;
  }

  static long range(final String variable, final long value, final long min, final long max) {
    if (value < min || value > max) {
      throw InvalidConfigException.badValue(variable, value, intExpectation(min, max));
    }
    return value;
  }

  static String intExpectation(final long min, final long max) {
    return "an integer in " + min + "-" + max;
  }

  static Duration millis(
      final String variable, final Duration value, final long minMs, final long maxMs) {
    Objects.requireNonNull(value, variable);
    if (value.isNegative() || value.toMillis() < minMs || value.toMillis() > maxMs) {
      throw InvalidConfigException.badValue(
          variable, value.toMillis(), millisExpectation(minMs, maxMs));
    }
    return value;
  }

  static String millisExpectation(final long minMs, final long maxMs) {
    return "a duration in milliseconds (an integer in " + minMs + "-" + maxMs + ")";
  }

  static String ipv4(final String variable, final String value) {
    if (value != null && !NetUtil.isValidIpV4Address(value)) {
      throw InvalidConfigException.badValue(variable, value, "an IPv4 address");
    }
    return value;
  }

  static String ipv6(final String variable, final String value) {
    // Brackets and zone ids belong to URLs and sockets, not to this setting.
    if (value != null && (!NetUtil.isValidIpV6Address(value) || value.indexOf('[') >= 0
        || value.indexOf('%') >= 0)) {
      throw InvalidConfigException.badValue(variable, value, "an IPv6 address");
    }
    return value;
  }

  /** A DNS name such as {@code relay.example.com}; returned in lower case. */
  static String hostname(final String variable, final String value) {
    if (value == null) {
      return null;
    }
    if (!isHostname(value)) {
      throw InvalidConfigException.badValue(
          variable, value, "a DNS hostname (letters, digits, '-' and '.', no scheme or path)");
    }
    return value.toLowerCase(Locale.ROOT);
  }

  /** An IP address or a DNS name, for listen hosts. */
  static String host(final String variable, final String value) {
    Objects.requireNonNull(value, variable);
    if (NetUtil.isValidIpV4Address(value) || NetUtil.isValidIpV6Address(value)
        || isHostname(value)) {
      return value;
    }
    throw InvalidConfigException.badValue(variable, value, "an IP address or a hostname");
  }

  static boolean isHostname(final String value) {
    if (value.isEmpty() || value.length() > MAX_HOSTNAME_LENGTH) {
      return false;
    }
    for (final String label : value.toLowerCase(Locale.ROOT).split("\\.", -1)) {
      if (!isLabel(label)) {
        return false;
      }
    }
    return true;
  }

  /** One DNS label (lower case), 1-63 characters, no leading or trailing '-'. */
  static boolean isLabel(final String label) {
    return LABEL.matcher(label).matches();
  }

  /** Multiaddrs are parsed by the libp2p module; here we only catch obvious mistakes. */
  static List<String> multiaddrs(final String variable, final List<String> values) {
    for (final String value : values) {
      if (!value.startsWith("/") || value.chars().anyMatch(Character::isWhitespace)) {
        throw InvalidConfigException.badValue(variable, value,
            "a multiaddr (text form starting with '/', e.g. /ip4/1.2.3.4/tcp/9091)");
      }
    }
    return List.copyOf(values);
  }

  /**
   * Multiaddrs of peers to dial: each must parse and end in {@code /p2p/<peer id>}.
   *
   * @throws InvalidConfigException naming {@code variable} at the first entry that cannot be
   *     dialled
   */
  static List<Multiaddr> peerMultiaddrs(final String variable, final List<String> values) {
    final List<Multiaddr> peers = new ArrayList<>(values.size());
    for (final String text : values) {
      final Multiaddr address;
      try {
        address = Multiaddr.parse(text);
      } catch (final MultiformatException e) {
        throw new InvalidConfigException(variable, variable + ": \"" + text
            + "\" is not a multiaddr (" + e.getMessage() + ")");
      }
      // /dnsaddr/<host> names its peers in its TXT records (resolved when dialled).
      if (address.peerId().isEmpty() && !address.has(MultiaddrProtocol.DNSADDR)) {
        throw new InvalidConfigException(variable, variable + ": \"" + text
            + "\" does not end in /p2p/<peer id>");
      }
      peers.add(address);
    }
    return List.copyOf(peers);
  }
}
