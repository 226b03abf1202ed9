package io.relaypinner.libp2p.protocol.identify;

import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.Multiaddr;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What identify and identify-push (libp2p/specs identify/README.md) need from the host: our
 * public key, our agent version, and the current listen addresses and protocols.
 *
 * <p>{@link #listenAddrs()} and {@link #protocols()} are called on a stream's event loop each time
 * an Identify message is built (once per identify response or push), so the host can change them
 * at runtime; they must be thread-safe, cheap and non-blocking (for instance a read of a volatile
 * immutable list). When they change, the host opens an {@link IdentifyPushProtocol} stream to
 * every connected peer that lists {@link IdentifyPushProtocol#PROTOCOL_ID}.
 *
 * <p>{@link #protocols()} is what JavaScript peers key on: js-libp2p only starts gossipsub,
 * bitswap and relay reservations towards peers that list those protocols. Keep the important
 * ones first: if the message would exceed {@link IdentifyConfig#maxMessageSize()}, the tail of
 * the protocol list is dropped, then the tail of the address list.
 */
public interface IdentifyLocal {
  /** Longest {@link #agentVersion()} accepted by {@link #of}. */
  int MAX_AGENT_VERSION_LENGTH = 256;

  /** Our public key, sent as the {@code PublicKey} protobuf; read once, when a protocol is made. */
  PublicKey publicKey();

  /** Our agent version, e.g. {@code relay-pinner/0.1.0}. */
  String agentVersion();

  /**
   * Our current listen addresses. A trailing {@code /p2p/<our id>} is removed before sending,
   * as js-libp2p does; duplicates and empty addresses are dropped.
   */
  List<Multiaddr> listenAddrs();

  /** The protocol ids we currently accept inbound streams for, most important first. */
  List<String> protocols();

  /** Our agent version string: {@code relay-pinner/<version>}. */
  static String agentVersion(final String version) {
    if (version == null || version.isBlank()) {
      throw new IllegalArgumentException("version must not be blank");
    }
    return "relay-pinner/" + version;
  }

  /**
   * A fixed key and agent version with live address and protocol suppliers.
   *
   * @throws IllegalArgumentException when the agent version is blank or longer than {@value
   *     #MAX_AGENT_VERSION_LENGTH} characters
   */
  static IdentifyLocal of(
      final PublicKey publicKey,
      final String agentVersion,
      final Supplier<List<Multiaddr>> listenAddrs,
      final Supplier<List<String>> protocols) {
    Objects.requireNonNull(publicKey, "publicKey");
    Objects.requireNonNull(listenAddrs, "listenAddrs");
    Objects.requireNonNull(protocols, "protocols");
    if (agentVersion == null || agentVersion.isBlank()
        || agentVersion.length() > MAX_AGENT_VERSION_LENGTH) {
      throw new IllegalArgumentException(
          "agentVersion must be non-blank and at most " + MAX_AGENT_VERSION_LENGTH
              + " characters");
    }
    return new IdentifyLocal() {
      @Override
      public PublicKey publicKey() {
        return publicKey;
      }

      @Override
      public String agentVersion() {
        return agentVersion;
      }

      @Override
      public List<Multiaddr> listenAddrs() {
        return listenAddrs.get();
      }

      @Override
      public List<String> protocols() {
        return protocols.get();
      }
    };
  }
}
