package io.relaypinner.handoff.guest;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKeyFile;
import io.relaypinner.libp2p.crypto.SecretFile;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest's state directory (CONTRACT.md "Handoff wire shapes") and the two keys in it:
 *
 * <pre>
 *   D/relay.env          the relay's settings, written by a successful configuration
 *                        (read by {@code relay-pinner run --env-file D/relay.env})
 *   D/keys/publisher.key the bootstrap publisher key: 0x + 64 hex, mode 0600
 *   D/keys/publisher.in-use  its address, once a configuration made it the key in use
 *   D/data/              the relay's data directory (DATASTORE_PATH)
 *   D/data/identity.key  the relay's libp2p identity in the relay's own key-file format
 *                        (hex of the libp2p PrivateKey protobuf, Ed25519, mode 0600)
 * </pre>
 *
 * <p>The relay identity lives where the relay itself looks for it, so {@code run} started with
 * {@code relay.env} (which sets {@code DATASTORE_PATH=D/data}) uses exactly the PeerId the guest
 * reported, and no secret is ever written to {@code relay.env}. Both keys are created on first
 * use; a guest reinstalled over the same directory keeps its identities. The relay key is never
 * replaced. The publisher key follows spec 2.9 ({@link #adoptPublisherKey}): until the guest's
 * first configuration it is provisional, and a {@code bootstrap_publisher_private_key} supplied
 * by that configuration replaces it; from then on the guest keeps it.
 */
public final class GuestStateDir {
  private static final Logger LOG = LoggerFactory.getLogger(GuestStateDir.class);
  /** The relay's key file name inside its data directory (the relay's {@code NodeIdentity}). */
  public static final String RELAY_KEY_FILE = "identity.key";
  private static final String IN_USE_FILE = "publisher.in-use";

  private final Path root;
  private final PrivateKey relayKey;
  private volatile PublisherKey publisherKey;

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
    final boolean inUse = Files.exists(absolute.resolve("keys").resolve(IN_USE_FILE))
        || Files.isRegularFile(absolute.resolve("relay.env"));
    LOG.info("guest state {}: publisher {} ({}), relay peer {} ({})", absolute,
        publisher.key().address(), inUse ? "in use" : publisher.created()
            ? "created, provisional until configured" : "kept, provisional until configured",
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

  /** The publisher key: the one in use, or the provisional one before the first configuration. */
  public PublisherKey publisherKey() {
    return publisherKey;
  }

  /** {@code D/keys/publisher.key}. */
  public Path publisherKeyFile() {
    return root.resolve("keys").resolve("publisher.key");
  }

  /** Whether a configuration made the publisher key the one in use (spec 2.9 "has one"). */
  public boolean publisherKeyInUse() {
    return Files.exists(root.resolve("keys").resolve(IN_USE_FILE)) || configured();
  }

  /**
   * Makes a publisher key the one in use, when a configuration is applied (spec 2.9): a guest
   * that already has one in use keeps it and ignores {@code supplied}; otherwise {@code supplied}
   * (when given) replaces the provisional key on disk, atomically. Either way the key is in use
   * afterwards.
   *
   * @return warnings for the log and the {@code /configure} answer (never the key)
   */
  public synchronized List<String> adoptPublisherKey(final Optional<PublisherKey> supplied)
      throws IOException {
    final List<String> warnings = new ArrayList<>();
    if (supplied.isPresent()) {
      if (publisherKeyInUse()) {
        warnings.add("bootstrap_publisher_private_key ignored: this guest already has a "
            + "publisher key in use and keeps it across reconfigurations (spec 2.9); it "
            + "publishes as " + publisherKey.address());
      } else {
        PublisherKey.replace(publisherKeyFile(), supplied.get());
        publisherKey = supplied.get();
        warnings.add("bootstrap_publisher_private_key used: this guest had no publisher key in "
            + "use, so it publishes as " + publisherKey.address() + "; the key was sent over "
            + "plain HTTP (prefer letting the guest generate its own, spec 2.9)");
      }
    }
    SecretFile.createIfAbsent(root.resolve("keys").resolve(IN_USE_FILE),
        (publisherKey.address() + "\n").getBytes(StandardCharsets.US_ASCII));
    return warnings;
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
