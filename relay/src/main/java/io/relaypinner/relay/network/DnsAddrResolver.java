package io.relaypinner.relay.network;

import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiaddrProtocol;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.PeerId;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import javax.naming.NamingEnumeration;
import javax.naming.NamingException;
import javax.naming.directory.Attribute;
import javax.naming.directory.Attributes;
import javax.naming.directory.DirContext;
import javax.naming.directory.InitialDirContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves {@code /dnsaddr/<host>[/p2p/<id>]} multiaddrs as libp2p does (multiformats/multiaddr
 * {@code protocols/DNSADDR.md}): the TXT records of {@code _dnsaddr.<host>} of the form
 * {@code dnsaddr=<multiaddr>}, followed recursively when an entry is a {@code /dnsaddr} again;
 * with a {@code /p2p/<id>} suffix only entries of that peer are kept. So the public bootstrap list
 * ({@code /dnsaddr/bootstrap.libp2p.io/p2p/…}) works in {@code RELAY_BOOTSTRAP_PEERS}.
 *
 * <p>Bounded: at most {@value #MAX_DEPTH} levels and {@value #MAX_ADDRESSES} addresses per
 * configured address; a lookup that fails is logged (one line) and yields nothing, it never stops
 * the relay. Entries that do not parse or do not end in {@code /p2p/<id>} are skipped. Blocking
 * (DNS): call it off the event loops.
 */
public final class DnsAddrResolver {
  /** Levels of {@code /dnsaddr} followed (the configured one is level 1). */
  public static final int MAX_DEPTH = 4;
  /** Addresses one configured {@code /dnsaddr} may yield. */
  public static final int MAX_ADDRESSES = 64;
  /** TXT lookups one configured {@code /dnsaddr} may cause. */
  public static final int MAX_LOOKUPS = 16;

  private static final Logger LOG = LoggerFactory.getLogger(DnsAddrResolver.class);
  private static final String PREFIX = "dnsaddr=";

  /** The TXT records of a DNS name (each record's strings joined). */
  @FunctionalInterface
  public interface TxtLookup {
    List<String> txt(String name) throws NamingException;
  }

  private final TxtLookup lookup;

  public DnsAddrResolver(final TxtLookup lookup) {
    this.lookup = Objects.requireNonNull(lookup, "lookup");
  }

  /** Through the system's DNS servers, with the JDK's JNDI DNS provider (2 s, one retry). */
  public static DnsAddrResolver system() {
    return new DnsAddrResolver(DnsAddrResolver::jndiTxt);
  }

  /** {@code addresses} with every {@code /dnsaddr} one replaced by what it resolves to. */
  public List<Multiaddr> resolve(final List<Multiaddr> addresses) {
    final List<Multiaddr> out = new ArrayList<>();
    for (final Multiaddr address : addresses) {
      if (!isDnsAddr(address)) {
        out.add(address);
        continue;
      }
      final List<Multiaddr> found = new ArrayList<>();
      final int[] lookups = {0};
      try {
        expand(address, 1, found, lookups);
      } catch (final NamingException | RuntimeException e) {
        LOG.warn("cannot resolve bootstrap address {}: {}", address, e.toString());
      }
      if (found.isEmpty()) {
        LOG.warn("bootstrap address {} resolved to no dialable address", address);
      } else {
        LOG.info("bootstrap address {} resolved to {} address(es)", address, found.size());
      }
      out.addAll(found);
    }
    return out;
  }

  /** Whether {@code address} starts with {@code /dnsaddr}: {@link #resolve} looks it up. */
  public static boolean isDnsAddr(final Multiaddr address) {
    return !address.isEmpty()
        && address.components().get(0).protocol() == MultiaddrProtocol.DNSADDR;
  }

  private void expand(final Multiaddr address, final int depth, final List<Multiaddr> found,
      final int[] lookups) throws NamingException {
    if (depth > MAX_DEPTH || lookups[0] >= MAX_LOOKUPS || found.size() >= MAX_ADDRESSES) {
      return;
    }
    lookups[0]++;
    final String host = address.valueOf(MultiaddrProtocol.DNSADDR).orElseThrow();
    final Optional<PeerId> wanted = address.peerId();
    for (final String record : lookup.txt("_dnsaddr." + host)) {
      if (found.size() >= MAX_ADDRESSES) {
        return;
      }
      final String text = unquote(record);
      if (!text.startsWith(PREFIX)) {
        continue;
      }
      final Multiaddr entry;
      try {
        entry = Multiaddr.parse(text.substring(PREFIX.length()));
      } catch (final MultiformatException e) {
        continue;
      }
      if (entry.peerId().isEmpty()
          || (wanted.isPresent() && !wanted.equals(entry.peerId()))) {
        continue;
      }
      if (isDnsAddr(entry)) {
        expand(entry, depth + 1, found, lookups);
      } else if (!found.contains(entry)) {
        found.add(entry);
      }
    }
  }

  private static String unquote(final String record) {
    final String text = record.strip();
    if (text.length() >= 2 && text.startsWith("\"") && text.endsWith("\"")) {
      return text.substring(1, text.length() - 1);
    }
    return text;
  }

  private static List<String> jndiTxt(final String name) throws NamingException {
    final Hashtable<String, String> env = new Hashtable<>();
    env.put(DirContext.INITIAL_CONTEXT_FACTORY, "com.sun.jndi.dns.DnsContextFactory");
    env.put("com.sun.jndi.dns.timeout.initial", "2000");
    env.put("com.sun.jndi.dns.timeout.retries", "1");
    final DirContext context = new InitialDirContext(env);
    try {
      final Attributes attributes = context.getAttributes(name, new String[] {"TXT"});
      final Attribute txt = attributes.get("TXT");
      final List<String> out = new ArrayList<>();
      if (txt != null) {
        final NamingEnumeration<?> values = txt.getAll();
        while (values.hasMore()) {
          // One TXT record of several strings comes as "a" "b": its strings joined.
          out.add(String.valueOf(values.next()).replace("\" \"", ""));
        }
      }
      return out;
    } finally {
      context.close();
    }
  }
}
