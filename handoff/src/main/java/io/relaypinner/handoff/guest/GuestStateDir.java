package io.relaypinner.handoff.guest;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKeyFile;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest's state directory (CONTRACT.md "Handoff wire shapes") and the two keys in it:
 *
 * <pre>
 *   D/relay.env          the relay's settings, written by a successful configuration
 *                        (read by {@code relay-pinner run --env-file D/relay.env})
 *   D/keys/publisher.key the bootstrap publisher key: 0x + 64 hex, mode 0600
 *   D/data/              the relay's data directory (DATASTORE_PATH)
 *   D/data/identity.key  the relay's libp2p identity in the relay's own key-file format
 *                        (hex of the libp2p PrivateKey protobuf, Ed25519, mode 0600)
 * </pre>
 *
 * <p>The relay identity lives where the relay itself looks for it, so {@code run} started with
 * {@code relay.env} (which sets {@code DATASTORE_PATH=D/data}) uses exactly the PeerId the guest
 * reported, and no secret is ever written to {@code relay.env}. Both keys are created on first
 * use and never replaced: a guest reinstalled over the same directory keeps its identities.
 */
public final class GuestStateDir {
  private static final Logger LOG = LoggerFactory.getLogger(GuestStateDir.class);
  /** The relay's key file name inside its data directory (the relay's {@code NodeIdentity}). */
  public static final String RELAY_KEY_FILE = "identity.key";

  private final Path root;
  private final PublisherKey publisherKey;
  private final PrivateKey relayKey;

  private GuestStateDir(final Path root, final PublisherKey publisherKey,
      final PrivateKey relayKey) {
    this.root = root;
    this.publisherKey = publisherKey;
    this.relayKey = relayKey;
  }

  /**
   * Opens {@code root}, creating the directories and the keys that do not exist yet.
   *
   * @throws io.relaypinner.libp2p.crypto.KeyFormatException when a key file is corrupt (it is
   *     never overwritten: the operator decides)
   * @throws UncheckedIOException when the directory cannot be created or read
   */
  public static GuestStateDir open(final Path root, final SecureRandom random) {
    final Path absolute = root.toAbsolutePath().normalize();
    try {
      Files.createDirectories(absolute.resolve("data"));
      final Path keys = absolute.resolve("keys");
      if (!Files.isDirectory(keys)) {
        Files.createDirectories(keys, PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rwx------")));
      }
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot create the state directory " + absolute + ": "
          + e.getMessage(), e);
    }
    final PublisherKey.Loaded publisher =
        PublisherKey.loadOrCreate(absolute.resolve("keys").resolve("publisher.key"), random);
    final PrivateKeyFile.Loaded relay = PrivateKeyFile.loadOrCreate(
        absolute.resolve("data").resolve(RELAY_KEY_FILE),
        () -> Keys.generate(KeyType.ED25519, random));
    LOG.info("guest state {}: publisher {} ({}), relay peer {} ({})", absolute,
        publisher.key().address(), publisher.created() ? "created" : "kept",
        relay.key().publicKey().peerId(), relay.created() ? "created" : "kept");
    return new GuestStateDir(absolute, publisher.key(), relay.key());
  }

  public Path root() {
    return root;
  }

  /** {@code D/relay.env}. */
  public Path envFile() {
    return root.resolve("relay.env");
  }

  /** {@code D/data}, the relay's {@code DATASTORE_PATH}. */
  public Path dataDir() {
    return root.resolve("data");
  }

  public PublisherKey publisherKey() {
    return publisherKey;
  }

  /** The PeerId of the relay key: what the relay started with {@code relay.env} reports. */
  public PeerId relayPeerId() {
    return relayKey.publicKey().peerId();
  }

  /** Signs {@code data} with the relay's libp2p key (proves control of {@link #relayPeerId()}). */
  public byte[] signAsRelay(final byte[] data) {
    return relayKey.sign(data);
  }

  /** Whether a configuration has been written (the relay may then be started). */
  public boolean configured() {
    return Files.isRegularFile(envFile());
  }
}
