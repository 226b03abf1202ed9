package io.relaypinner.handoff.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.guest.Acknowledgement;
import io.relaypinner.handoff.guest.GuestAddresses;
import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.guest.GuestStateDir;
import io.relaypinner.handoff.guest.OwnerAuthorization;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.MessageType;
import io.relaypinner.handoff.records.MessageVerifier;
import io.relaypinner.handoff.records.PostPage;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PublishResult;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.service.LocalRecordStore;
import io.relaypinner.handoff.records.service.MemoryRecordStorage;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKeyFile;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller against a fake provider (instances whose ports lead nowhere, except the libp2p
 * port where a test runs a guest's relay identity on a real libp2p host) and the record engine in
 * process: decisions, cleanup, acknowledgement checks and the handshake proof that decides which
 * acknowledgement is authorized, without guest processes.
 */
class DeployControllerTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final URI RECORDS = URI.create("http://127.0.0.1:1");

  @TempDir
  Path dir;

  private static final ObjectMapper JSON = new ObjectMapper();

  private final LocalRecordStore local =
      new LocalRecordStore(new MemoryRecordStorage(), new MessageVerifier(), 10_000);
  private final RecordingStore store = new RecordingStore(local);
  private final EthPrivateKey wallet = EthPrivateKey.generate(RANDOM);
  private final List<String> stages = new ArrayList<>();
  private final EventLoops loops = EventLoops.create(1, "test-relays");
  private final List<Host> hosts = new ArrayList<>();
  private final List<Thread> acknowledgers = new ArrayList<>();
  private final Libp2pPeerHandshake libp2p =
      new Libp2pPeerHandshake(RANDOM, Duration.ofSeconds(2));
  private final AtomicInteger handshakes = new AtomicInteger();
  private final PeerHandshake handshake = (ip, port) -> {
    handshakes.incrementAndGet();
    return libp2p.prove(ip, port);
  };

  @AfterEach
  void close() throws InterruptedException {
    for (final Thread thread : acknowledgers) {
      thread.interrupt();
      thread.join(5_000);
    }
    libp2p.close();
    hosts.forEach(Host::close);
    loops.group().shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5,
        TimeUnit.SECONDS);
    local.close();
  }

  /** The in-process store, remembering every owner authorization published through it. */
  private static final class RecordingStore implements RecordStore {
    final RecordStore delegate;
    final List<String> authorizations = new CopyOnWriteArrayList<>();
    /** While false, posts are listed as none (the records service has not indexed them yet). */
    volatile BooleanSupplier listing = () -> true;

    RecordingStore(final RecordStore delegate) {
      this.delegate = delegate;
    }

    @Override
    public PublishResult publish(final AlephMessage message) {
      final PublishResult result = delegate.publish(message);
      if (message.type() == MessageType.AGGREGATE) {
        try {
          JSON.readTree(message.itemContent()).path("content").forEach(entry -> {
            final JsonNode b64 = entry.path("bootstrap").path("ownerAuthorizationBase64");
            if (b64.isTextual()) {
              authorizations.add(b64.asText());
            }
          });
        } catch (final IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      return result;
    }

    @Override
    public Map<String, JsonNode> aggregates(final EthAddress owner,
        final Collection<String> keys) {
      return delegate.aggregates(owner, keys);
    }

    @Override
    public PostPage posts(final PostQuery query) {
      if (!listing.getAsBoolean()) {
        return new PostPage(List.of(), query.page(), query.pagination(), 0);
      }
      return delegate.posts(query);
    }
  }

  /** Offers {@code slots} hosts; every instance's ports are closed; calls a hook on create. */
  private static final class FakeProvider implements HostProvider {
    final int slots;
    final List<InstanceRequest> created = new ArrayList<>();
    final List<String> erased = new ArrayList<>();
    Consumer<HostInstance> onCreate = instance -> { };
    Optional<Boolean> running = Optional.empty();
    /** The host port of guest port 9091 (0: one where nothing listens). */
    int relayTcp;

    FakeProvider(final int slots) {
      this.slots = slots;
    }

    @Override
    public String name() {
      return "fake";
    }

    @Override
    public List<HostCandidate> compatibleHosts(final ImageManifest manifest) {
      final List<HostCandidate> hosts = new ArrayList<>();
      for (int i = 1; i <= slots; i++) {
        hosts.add(new HostCandidate("fake-" + i, "fake " + i));
      }
      return hosts;
    }

    @Override
    public HostInstance create(final InstanceRequest request) {
      created.add(request);
      final int dead = deadPort();
      final HostInstance instance = new HostInstance(request.deploymentId() + "-"
          + request.attempt(), LocalHostProvider.sha256Hex(request.deploymentId()
              + request.attempt()), request.host(), "127.0.0.1", Optional.empty(),
          Map.of(80, PortMapping.tcp(dead), 9090, PortMapping.tcp(dead),
              9091, PortMapping.tcp(relayTcp > 0 ? relayTcp : dead), 9092, PortMapping.tcp(dead)));
      onCreate.accept(instance);
      return instance;
    }

    @Override
    public Optional<Boolean> running(final String instanceId) {
      return running;
    }

    @Override
    public void erase(final String instanceId) {
      erased.add(instanceId);
    }
  }

  private static int deadPort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (final IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private DeployController controller(final FakeProvider provider,
      final DeployConfig config) {
    return new DeployController(provider, store, wallet, config, Clock.systemUTC(),
        (stage, detail, percent) -> stages.add(stage), RANDOM, handshake);
  }

  private static DeployConfig.Builder quick() {
    return DeployConfig.builder().ackTimeout(Duration.ofMillis(600))
        .pollInterval(Duration.ofMillis(50)).relayTimeout(Duration.ofMillis(300))
        .registrationTimeout(Duration.ofMillis(100)).setupAttempts(1)
        .httpTimeout(Duration.ofSeconds(2));
  }

  private static final ImageManifest PUSH_ONLY =
      new ImageManifest("orbitdb-relay", "v0.9.7", false, ImageManifest.RELAY_PORTS);

  @Test
  void deploy_shouldRefuseBeforeCreatingHost_whenHttpsOriginAndPushOnlyImage() {
    final FakeProvider provider = new FakeProvider(5);
    assertThatThrownBy(() -> controller(provider, quick().origin(URI.create("https://a.example"))
        .build()).deploy(PUSH_ONLY, RECORDS, SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e ->
            assertThat(e.code()).isEqualTo(DeployFailedException.MIXED_CONTENT));
    assertThat(provider.created).isEmpty();
    assertThat(stages).doesNotContain("selecting-host");
  }

  @Test
  void deploy_shouldPull_whenHttpsOriginAndImageSupportsPull() {
    final FakeProvider provider = new FakeProvider(1);
    assertThatThrownBy(() -> controller(provider, quick().origin(URI.create("https://a.example"))
        .build()).deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> assertThat(e.attempts())
            .singleElement().satisfies(a ->
                assertThat(a.stage()).isEqualTo("waiting-for-acknowledgement")));
    assertThat(provider.created).hasSize(1);
  }

  @Test
  void deploy_shouldRefuse_whenPullForcedOnPushOnlyImage() {
    final FakeProvider provider = new FakeProvider(5);
    assertThatThrownBy(() -> controller(provider, quick().handoff(HandoffMode.PULL).build())
        .deploy(PUSH_ONLY, RECORDS, SshKeys.throwawayKey()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("supportsBootstrapConfigAggregate");
    assertThat(provider.created).isEmpty();
  }

  @Test
  void deploy_shouldFailNoCompatibleHost_whenProviderOffersNone() {
    assertThatThrownBy(() -> controller(new FakeProvider(0), quick().build())
        .deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e ->
            assertThat(e.code()).isEqualTo(DeployFailedException.NO_COMPATIBLE_HOST));
  }

  @Test
  void deploy_shouldTryFiveAndLeaveNoEntry_whenNoGuestAcknowledges() {
    final FakeProvider provider = new FakeProvider(7);
    assertThatThrownBy(() -> controller(provider, quick().build())
        .deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> {
          assertThat(e.code()).isEqualTo(DeployFailedException.ALL_HOSTS_FAILED);
          assertThat(e.attempts()).hasSize(5).allSatisfy(a -> {
            assertThat(a.erased()).isTrue();
            // Config entry + its delete, all forgotten.
            assertThat(a.forgotten()).hasSize(2);
            a.forgotten().forEach(hash -> assertThat(store.posts(
                PostQuery.builder().hashes(hash).build()).posts()).isEmpty());
          });
          assertThat(e.getMessage()).contains("fake-1: no verified acknowledgement",
              "fake-5:", "(while: waiting-for-acknowledgement)");
        });
    assertThat(provider.created).hasSize(5);
    assertThat(provider.erased).hasSize(5);
    assertThat(provider.created).allSatisfy(r -> assertThat(r.authorizedKey())
        .contains(" aleph-bootstrap-config:" + wallet.address() + ":"));
    assertThat(store.aggregate(wallet.address(), GuestRecords.CONFIG_AGGREGATE_KEY)
        .map(JsonNode::size).orElse(0)).isZero();
  }

  @Test
  void deploy_shouldEndAttemptAtOnce_whenProviderReportsInstanceGone() {
    final FakeProvider provider = new FakeProvider(2);
    provider.running = Optional.of(false);
    assertThatThrownBy(() -> controller(provider, quick().ackTimeout(Duration.ofMinutes(10))
        .build()).deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> assertThat(e.attempts())
            .hasSize(2).allSatisfy(a -> {
              assertThat(a.stage()).isEqualTo("waiting-for-acknowledgement");
              assertThat(a.reason().orElseThrow()).contains("stopped");
            }));
  }

  /** A libp2p host holding the relay key of {@code keys}, on 127.0.0.1: what its relay is. */
  private Host relayOf(final GuestStateDir keys) throws Exception {
    final Host host = new Host(PrivateKeyFile.load(keys.dataDir().resolve(
        GuestStateDir.RELAY_KEY_FILE)), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0"))).build(), loops,
        Clock.systemUTC());
    hosts.add(host);
    host.start().get(10, TimeUnit.SECONDS);
    return host;
  }

  private static int tcpPort(final Host host) {
    final Matcher m = Pattern.compile("/tcp/(\\d+)").matcher(host.boundAddresses().get(0)
        .toString());
    assertThat(m.find()).isTrue();
    return Integer.parseInt(m.group(1));
  }

  /**
   * Once the token's entry is published and {@code when} holds, acknowledges it with the keys of
   * {@code keys} (a self-consistent acknowledgement: signed by its publisher, the peer proof by
   * its relay key), listing {@code probe} as its relay's addresses.
   */
  private Thread acknowledger(final GuestStateDir keys, final List<String> probe,
      final BooleanSupplier when, final AtomicBoolean posted) {
    final RecordSigner signer = new RecordSigner(keys.publisherKey().ethKey(), Clock.systemUTC());
    final Thread thread = new Thread(() -> {
      while (!Thread.currentThread().isInterrupted() && !posted.get()) {
        final Optional<JsonNode> entries = store.aggregate(wallet.address(),
            GuestRecords.CONFIG_AGGREGATE_KEY);
        if (entries.isPresent() && entries.get().size() > 0 && when.getAsBoolean()) {
          final String token = entries.get().fieldNames().next();
          final ObjectNode content = Acknowledgement.content(entries.get().get(token), token,
              keys, GuestAddresses.NONE, Optional.empty(), Instant.now());
          probe.forEach(content.putArray("probeMultiaddrs")::add);
          store.publish(signer.post(GuestRecords.ACK_POST_TYPE, GuestRecords.ACK_REF, content,
              GuestRecords.CHANNEL));
          posted.set(true);
          return;
        }
        try {
          Thread.sleep(10);
        } catch (final InterruptedException e) {
          return;
        }
      }
    }, "acknowledger");
    thread.start();
    acknowledgers.add(thread);
    return thread;
  }

  /** Every owner authorization the controller published, decoded: (peerId, publisher). */
  private List<JsonNode> authorizationsPublished() {
    final List<JsonNode> payloads = new ArrayList<>();
    for (final String b64 : store.authorizations) {
      try {
        payloads.add(JSON.readTree(Base64.getDecoder().decode(b64)).path("payload"));
      } catch (final IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return payloads;
  }

  @Test
  void deploy_shouldIgnoreAcknowledgement_whenNotSignedByThePublisherItNames() throws Exception {
    final GuestStateDir guest = GuestStateDir.open(dir.resolve("guest"), RANDOM);
    final RecordSigner forger = new RecordSigner(EthPrivateKey.generate(RANDOM),
        Clock.systemUTC());
    final FakeProvider provider = new FakeProvider(1);
    provider.relayTcp = tcpPort(relayOf(guest));
    final DeployController controller = controller(provider, quick()
        .ackTimeout(Duration.ofSeconds(1)).build());
    // Once the entry is published, a forger posts the guest's content under its own key.
    final Thread forge = new Thread(() -> {
      while (!Thread.currentThread().isInterrupted()) {
        final Optional<JsonNode> entries = store.aggregate(wallet.address(),
            GuestRecords.CONFIG_AGGREGATE_KEY);
        if (entries.isPresent() && entries.get().size() > 0) {
          final String token = entries.get().fieldNames().next();
          store.publish(forger.post(GuestRecords.ACK_POST_TYPE, GuestRecords.ACK_REF,
              Acknowledgement.content(entries.get().get(token), token, guest,
                  GuestAddresses.NONE, Optional.empty(), Instant.now()), GuestRecords.CHANNEL));
          return;
        }
        try {
          Thread.sleep(20);
        } catch (final InterruptedException e) {
          return;
        }
      }
    });
    forge.start();
    acknowledgers.add(forge);
    assertThatThrownBy(() -> controller.deploy(ImageManifest.BUILT_IN, RECORDS,
        SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> assertThat(e.attempts())
            .singleElement().satisfies(a -> assertThat(a.stage())
                .isEqualTo("waiting-for-acknowledgement")));
    forge.join(5_000);
    assertThat(store.posts(PostQuery.builder().types(GuestRecords.ACK_POST_TYPE).build())
        .posts()).hasSize(1);
    assertThat(stages).doesNotContain("authorizing");
    assertThat(store.authorizations).isEmpty();
  }

  /**
   * Must show (issue 19): a forger reads the public entry and acknowledges first with keys of its
   * own; the deployer sees that acknowledgement alone, proves by a Noise handshake which PeerId
   * runs at the instance's allocated port, and authorizes only the real guest, which acknowledged
   * later.
   */
  @Test
  void deploy_shouldAuthorizeOnlyTheProvenGuest_whenForgerAcknowledgesFirst() throws Exception {
    final GuestStateDir guest = GuestStateDir.open(dir.resolve("guest"), RANDOM);
    final GuestStateDir forger = GuestStateDir.open(dir.resolve("forger"), RANDOM);
    final FakeProvider provider = new FakeProvider(1);
    provider.relayTcp = tcpPort(relayOf(guest));
    final AtomicBoolean forged = new AtomicBoolean();
    final AtomicBoolean acknowledged = new AtomicBoolean();
    acknowledger(forger, List.of(), () -> true, forged);
    // The real guest acknowledges only after the deployer has acted on the forged one alone.
    final AtomicInteger handshakesBeforeRealAck = new AtomicInteger();
    acknowledger(guest, List.of(), () -> handshakes.get() > 0
        && handshakesBeforeRealAck.compareAndSet(0, handshakes.get()), acknowledged);

    assertThatThrownBy(() -> controller(provider, quick().ackTimeout(Duration.ofSeconds(10))
        .build()).deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> assertThat(e.attempts())
            .singleElement().satisfies(a -> {
              // Authorized, then the fake instance's relay HTTP port leads nowhere.
              assertThat(a.stage()).isEqualTo("verifying-relay");
              assertThat(a.reason().orElseThrow()).contains("proved PeerId "
                  + guest.relayPeerId(), "/health never answered");
            }));

    assertThat(forged).isTrue();
    assertThat(acknowledged).isTrue();
    assertThat(handshakesBeforeRealAck.get()).isPositive();
    assertProvenGuestOnlyAuthorized(guest, forger);
  }

  /**
   * Must show (issue 19): the forger also runs a real libp2p relay with its key, on another
   * address, and names it in its acknowledgement; the deployer dials only the address the
   * provider allocated, so the forger is still refused.
   */
  @Test
  void deploy_shouldRefuseForger_whenItsRelayRunsOnAnotherAddress() throws Exception {
    final GuestStateDir guest = GuestStateDir.open(dir.resolve("guest"), RANDOM);
    final GuestStateDir forger = GuestStateDir.open(dir.resolve("forger"), RANDOM);
    final FakeProvider provider = new FakeProvider(1);
    provider.relayTcp = tcpPort(relayOf(guest));
    final Host forgerRelay = relayOf(forger);
    final String forgerAddress = forgerRelay.boundAddresses().get(0) + "/p2p/"
        + forger.relayPeerId();
    final AtomicBoolean forged = new AtomicBoolean();
    final AtomicBoolean acknowledged = new AtomicBoolean();
    acknowledger(forger, List.of(forgerAddress), () -> true, forged);
    acknowledger(guest, List.of(), () -> handshakes.get() > 0, acknowledged);

    assertThatThrownBy(() -> controller(provider, quick().ackTimeout(Duration.ofSeconds(10))
        .build()).deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> assertThat(e.attempts())
            .singleElement().satisfies(a -> assertThat(a.stage()).isEqualTo("verifying-relay")));

    assertThat(forged).isTrue();
    assertThat(acknowledged).isTrue();
    assertProvenGuestOnlyAuthorized(guest, forger);
    // The forger's relay answers for its PeerId: the handshake proof is what tells them apart.
    assertThat(handshake.prove("127.0.0.1", tcpPort(forgerRelay)))
        .isEqualTo(forger.relayPeerId());
  }

  @Test
  void deploy_shouldSignNoAuthorization_whenOnlyAForgerAcknowledges() throws Exception {
    final GuestStateDir guest = GuestStateDir.open(dir.resolve("guest"), RANDOM);
    final GuestStateDir forger = GuestStateDir.open(dir.resolve("forger"), RANDOM);
    final FakeProvider provider = new FakeProvider(1);
    provider.relayTcp = tcpPort(relayOf(guest));
    final Host forgerRelay = relayOf(forger);
    final AtomicBoolean forged = new AtomicBoolean();
    acknowledger(forger, List.of(forgerRelay.boundAddresses().get(0) + "/p2p/"
        + forger.relayPeerId()), () -> true, forged);

    assertThatThrownBy(() -> controller(provider, quick().ackTimeout(Duration.ofSeconds(1))
        .build()).deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> assertThat(e.attempts())
            .singleElement().satisfies(a -> {
              assertThat(a.stage()).isEqualTo("waiting-for-acknowledgement");
              assertThat(a.reason().orElseThrow()).contains("proved PeerId "
                  + guest.relayPeerId(), forger.relayPeerId().toBase58());
              assertThat(a.forgotten()).hasSize(2);
            }));
    assertThat(forged).isTrue();
    assertThat(handshakes.get()).isPositive();
    assertThat(stages).doesNotContain("authorizing");
    assertThat(store.authorizations).isEmpty();
  }

  @Test
  void deploy_shouldPublishNoAuthorization_whenHttpsOriginCannotDial() throws Exception {
    final GuestStateDir guest = GuestStateDir.open(dir.resolve("guest"), RANDOM);
    final FakeProvider provider = new FakeProvider(1);
    provider.relayTcp = tcpPort(relayOf(guest));
    final AtomicBoolean acknowledged = new AtomicBoolean();
    acknowledger(guest, List.of(), () -> true, acknowledged);

    final DeployResult result = controller(provider, quick()
        .origin(URI.create("https://deployer.example")).ackTimeout(Duration.ofSeconds(10))
        .build()).deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey());

    assertThat(result.ok()).isTrue();
    assertThat(result.relay().orElseThrow().peerId()).isEqualTo(guest.relayPeerId().toBase58());
    assertThat(result.warnings()).anySatisfy(w -> assertThat(w)
        .contains("no owner authorization published", "wallet-signed"));
    assertThat(stages).doesNotContain("authorizing", "verifying-relay");
    assertThat(handshakes.get()).isZero();
    assertThat(store.authorizations).isEmpty();
  }

  @Test
  void deploy_shouldFailWithoutAuthorization_whenHttpsOriginSeesConflictingAcknowledgements()
      throws Exception {
    final GuestStateDir guest = GuestStateDir.open(dir.resolve("guest"), RANDOM);
    final GuestStateDir forger = GuestStateDir.open(dir.resolve("forger"), RANDOM);
    final FakeProvider provider = new FakeProvider(1);
    final AtomicBoolean forged = new AtomicBoolean();
    final AtomicBoolean acknowledged = new AtomicBoolean();
    acknowledger(forger, List.of(), () -> true, forged);
    acknowledger(guest, List.of(), forged::get, acknowledged);
    // Listed once both are posted: else a poll between the two could see only the forger's.
    store.listing = acknowledged::get;

    assertThatThrownBy(() -> controller(provider, quick()
        .origin(URI.create("https://deployer.example")).ackTimeout(Duration.ofSeconds(2))
        .build()).deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> assertThat(e.attempts())
            .singleElement().satisfies(a -> assertThat(a.reason().orElseThrow())
                .contains("2 conflicting acknowledgements", "cannot dial")));
    assertThat(acknowledged).isTrue();
    assertThat(handshakes.get()).isZero();
    assertThat(store.authorizations).isEmpty();
  }

  @Test
  void deploy_shouldFindTheGuestsAcknowledgement_among600JunkOnesBeforeAndAfterIt()
      throws Exception {
    final GuestStateDir guest = GuestStateDir.open(dir.resolve("guest"), RANDOM);
    final RecordSigner junker = new RecordSigner(EthPrivateKey.generate(RANDOM),
        Clock.systemUTC());
    final FakeProvider provider = new FakeProvider(1);
    final AtomicBoolean before = new AtomicBoolean();
    final AtomicBoolean acknowledged = new AtomicBoolean();
    final AtomicBoolean after = new AtomicBoolean();
    // The deployer sees the posts only once all 601 are there (as from a records service that
    // indexed them in one go), so its first read already has the guest's behind 300 newer ones.
    store.listing = after::get;
    // 300 acknowledgement posts as soon as the entry is public (content copied from the entry,
    // signed by a stranger: they never verify), the guest's, then 300 more: the guest's is then
    // past the newest 300.
    final Thread junk = new Thread(() -> {
      try {
        Optional<JsonNode> entries = Optional.empty();
        while (entries.isEmpty() || entries.get().size() == 0) {
          Thread.sleep(10);
          entries = store.aggregate(wallet.address(), GuestRecords.CONFIG_AGGREGATE_KEY);
        }
        final String token = entries.get().fieldNames().next();
        final ObjectNode content = Acknowledgement.content(entries.get().get(token), token,
            guest, GuestAddresses.NONE, Optional.empty(), Instant.now());
        final int[] n = {0};
        for (int i = 0; i < 300; i++) {
          store.publish(junker.post(GuestRecords.ACK_POST_TYPE, GuestRecords.ACK_REF,
              content.deepCopy().put("n", ++n[0]), GuestRecords.CHANNEL));
        }
        before.set(true);
        while (!acknowledged.get()) {
          Thread.sleep(10);
        }
        for (int i = 0; i < 300; i++) {
          store.publish(junker.post(GuestRecords.ACK_POST_TYPE, GuestRecords.ACK_REF,
              content.deepCopy().put("n", ++n[0]), GuestRecords.CHANNEL));
        }
        after.set(true);
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "junk-acknowledgements");
    junk.start();
    acknowledgers.add(junk);
    acknowledger(guest, List.of(), before::get, acknowledged);

    final DeployResult result = controller(provider, quick()
        .origin(URI.create("https://deployer.example")).ackTimeout(Duration.ofSeconds(30))
        .build()).deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey());

    assertThat(result.ok()).isTrue();
    assertThat(result.relay().orElseThrow().peerId()).isEqualTo(guest.relayPeerId().toBase58());
  }

  /** Exactly one authorization was published: for the guest's PeerId and publisher. */
  private void assertProvenGuestOnlyAuthorized(final GuestStateDir guest,
      final GuestStateDir forger) throws Exception {
    assertThat(authorizationsPublished()).singleElement().satisfies(payload -> {
      assertThat(payload.path("peerId").asText()).isEqualTo(guest.relayPeerId().toBase58());
      assertThat(payload.path("publisherAddress").asText())
          .isEqualToIgnoringCase(guest.publisherKey().address());
    });
    assertThat(authorizationsPublished()).noneSatisfy(payload -> assertThat(
        payload.path("peerId").asText()).isEqualTo(forger.relayPeerId().toBase58()));
    assertThat(authorizationsPublished()).noneSatisfy(payload -> assertThat(
        payload.path("publisherAddress").asText())
        .isEqualToIgnoringCase(forger.publisherKey().address()));
    final String b64 = store.authorizations.get(0);
    OwnerAuthorization.verify(b64, wallet.address(), guest.publisherKey().ethKey().address(),
        guest.relayPeerId().toBase58(), Clock.systemUTC());
  }

  @Test
  void signOwnerAuthorization_shouldBindOwnerPublisherPeerRegistrationAndExpiry_always()
      throws Exception {
    final GuestStateDir guest = GuestStateDir.open(dir.resolve("guest"), RANDOM);
    final Instant now = Instant.now();
    final String b64 = DeployController.signOwnerAuthorization(wallet,
        guest.publisherKey().ethKey().address(), guest.relayPeerId().toBase58(),
        "relay:orbitdb-relay:x:abc", ImageManifest.BUILT_IN, "abc", now,
        now.plusSeconds(60));
    final OwnerAuthorization verified = OwnerAuthorization.verify(b64, wallet.address(),
        guest.publisherKey().ethKey().address(), guest.relayPeerId().toBase58(),
        Clock.systemUTC());
    final JsonNode payload = verified.json().path("payload");
    assertThat(payload.path("registrationId").asText()).isEqualTo("relay:orbitdb-relay:x:abc");
    assertThat(payload.path("expiresAt").asLong()).isEqualTo(now.plusSeconds(60).toEpochMilli());
    assertThatThrownBy(() -> OwnerAuthorization.verify(b64, wallet.address(),
        guest.publisherKey().ethKey().address(), guest.relayPeerId().toBase58(),
        Clock.offset(Clock.systemUTC(), Duration.ofMinutes(2))))
        .hasMessageContaining("expired");
  }
}

