package io.relaypinner.libp2p.host;

import io.netty.channel.Channel;
import io.relaypinner.libp2p.multistream.MultistreamProtocol;
import io.relaypinner.libp2p.multistream.ProtocolInstaller;
import io.relaypinner.libp2p.multistream.ProtocolMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * The protocols this host answers on inbound streams: exact ids ({@code /ipfs/id/1.0.0}) and
 * prefix families whose ids are dynamic ({@code /orbitdb/heads/<address>}). It is the matcher and
 * installer of every stream's {@code MultistreamResponder}, and the list identify advertises.
 *
 * <p>Thread-safe: protocols may be added and removed while streams are being negotiated; readers
 * on event loops never block.
 */
public final class ProtocolRegistry implements ProtocolMatcher, ProtocolInstaller {
  private record Family(String prefix, Predicate<String> accepts, ProtocolInstaller installer) {}

  private final Map<String, ProtocolInstaller> exact = new ConcurrentHashMap<>();
  private final List<String> order = new CopyOnWriteArrayList<>();
  private final List<Family> families = new CopyOnWriteArrayList<>();
  private final List<Runnable> changeListeners = new CopyOnWriteArrayList<>();

  /** Answers {@code protocol} by running {@code installer} on each negotiated stream. */
  public void register(final String protocol, final ProtocolInstaller installer) {
    MultistreamProtocol.checkProtocolId(protocol);
    Objects.requireNonNull(installer, "installer");
    if (exact.put(protocol, installer) == null) {
      order.add(protocol);
      fireChanged();
    }
  }

  /**
   * Answers every id that starts with {@code prefix} and that {@code accepts} (called on the event
   * loop: must be fast). Such ids are not advertised by identify or {@code ls}.
   */
  public void registerFamily(final String prefix, final Predicate<String> accepts,
      final ProtocolInstaller installer) {
    families.add(new Family(Objects.requireNonNull(prefix, "prefix"),
        Objects.requireNonNull(accepts, "accepts"), Objects.requireNonNull(installer,
            "installer")));
  }

  public void unregister(final String protocol) {
    if (exact.remove(protocol) != null) {
      order.remove(protocol);
      fireChanged();
    }
  }

  /** Called after the advertised list changed (identify push to connected peers). */
  public void onChange(final Runnable listener) {
    changeListeners.add(listener);
  }

  /** The exact ids, in registration order: what identify advertises. */
  public List<String> protocols() {
    return List.copyOf(order);
  }

  @Override
  public List<String> advertised() {
    return protocols();
  }

  @Override
  public boolean matches(final String protocol) {
    return exact.containsKey(protocol) || family(protocol) != null;
  }

  @Override
  public void install(final Channel channel, final String protocol) throws Exception {
    ProtocolInstaller installer = exact.get(protocol);
    if (installer == null) {
      final Family family = family(protocol);
      installer = family == null ? null : family.installer();
    }
    if (installer == null) {
      // Unregistered between the match and the install: refuse the stream.
      channel.close();
      return;
    }
    installer.install(channel, protocol);
  }

  private Family family(final String protocol) {
    for (final Family family : families) {
      if (protocol.startsWith(family.prefix()) && family.accepts().test(protocol)) {
        return family;
      }
    }
    return null;
  }

  private void fireChanged() {
    for (final Runnable listener : new ArrayList<>(changeListeners)) {
      listener.run();
    }
  }
}
