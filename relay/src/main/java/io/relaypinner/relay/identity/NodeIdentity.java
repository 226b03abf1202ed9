package io.relaypinner.relay.identity;

import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKeyFile;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.relay.config.InvalidConfigException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Optional;

/**
 * The relay's libp2p identity: its private key, PeerId and AutoTLS serving zone.
 *
 * <p>The key comes from {@code RELAY_PRIV_KEY} when set, else from {@code <data dir>/identity.key},
 * which is created (Ed25519, mode 0600) on first start so the PeerId survives restarts.
 *
 * @param privateKey the node's key
 * @param peerId its PeerId
 * @param autoTlsServingZone {@code <PeerId as CIDv1 libp2p-key in base36>.<domain>}
 * @param source where the key came from
 */
public record NodeIdentity(
    PrivateKey privateKey, PeerId peerId, String autoTlsServingZone, Source source) {
  /** File name of the stored key inside the data directory. */
  public static final String KEY_FILE = "identity.key";

  /** Where a node's key came from. */
  public enum Source {
    /** {@code RELAY_PRIV_KEY}. */
    ENVIRONMENT,
    /** Read from the key file. */
    STORED,
    /** Created in the key file on this start. */
    CREATED
  }

  /**
   * Loads (or creates) the identity.
   *
   * @param dataDir the data directory ({@code DATASTORE_PATH})
   * @param privateKeyHex {@code RELAY_PRIV_KEY}, when set
   * @param autoTlsDomain {@code RELAY_AUTOTLS_DOMAIN}
   * @throws InvalidConfigException when {@code RELAY_PRIV_KEY} is not a usable key
   * @throws KeyFormatException when the stored key file is corrupt (never overwritten)
   */
  public static NodeIdentity load(
      final Path dataDir, final Optional<String> privateKeyHex, final String autoTlsDomain,
      final SecureRandom random) {
    final PrivateKey key;
    final Source source;
    if (privateKeyHex.isPresent()) {
      try {
        key = Keys.unmarshalPrivateKeyHex(privateKeyHex.get());
      } catch (final KeyFormatException e) {
        // The message says what is wrong with the shape, never the key material.
        throw new InvalidConfigException("RELAY_PRIV_KEY", "RELAY_PRIV_KEY: the value (not shown,"
            + " it is a secret) is not a libp2p private key protobuf in hex: " + e.getMessage());
      }
      source = Source.ENVIRONMENT;
    } else {
      final PrivateKeyFile.Loaded loaded = PrivateKeyFile.loadOrCreate(
          dataDir.resolve(KEY_FILE), () -> Keys.generate(KeyType.ED25519, random));
      key = loaded.key();
      source = loaded.created() ? Source.CREATED : Source.STORED;
    }
    final PeerId peerId = key.publicKey().peerId();
    return new NodeIdentity(key, peerId, servingZone(peerId, autoTlsDomain), source);
  }

  /** {@code <PeerId as CIDv1 libp2p-key, base36 with its k prefix>.<domain>}. */
  public static String servingZone(final PeerId peerId, final String domain) {
    return peerId.toCid().toString(Multibase.Base.BASE36) + "." + domain;
  }

  @Override
  public String toString() {
    return "NodeIdentity[" + peerId + ", " + source + "]";
  }
}
