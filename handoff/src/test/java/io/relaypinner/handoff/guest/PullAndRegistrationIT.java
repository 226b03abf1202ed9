package io.relaypinner.handoff.guest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.json.CanonicalJson;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.SignedPayload;
import io.relaypinner.handoff.records.client.HttpRecordStore;
import io.relaypinner.handoff.records.service.RecordServer;
import io.relaypinner.handoff.records.service.RecordServiceConfig;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pull handoff and the registration against the embedded record service over real HTTP on
 * loopback (port 0), with a stand-in relay.
 */
class PullAndRegistrationIT {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir
  Path dir;

  private final SecureRandom random = new SecureRandom();
  private final EthPrivateKey owner = EthPrivateKey.generate(random);
  private final String token = UUID.randomUUID().toString();
  private RecordServer records;
  private RecordStore store;
  private GuestStateDir state;
  private GuestAgent agent;
  private SetupServer setup;
  private PullAgent pull;
  private RegistrationPublisher registration;
  private Path authorizedKeys;

  @BeforeEach
  void start() throws Exception {
    records = RecordServer.open(RecordServiceConfig.builder().host("127.0.0.1").port(0).build(),
        dir.resolve("records"));
    records.start();
    store = new HttpRecordStore(URI.create("http://127.0.0.1:" + records.port()));
    state = GuestStateDir.open(dir.resolve("guest"), random);
    agent = new GuestAgent(state, new FakeRelayLauncher(), GuestAgent.Settings.DEFAULT,
        Clock.systemUTC());
    setup = new SetupServer(agent, "127.0.0.1", 0);
    setup.start();
    authorizedKeys = dir.resolve("authorized_keys");
    Files.writeString(authorizedKeys, "# deployer key\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB "
        + "aleph-bootstrap-config:" + owner.address() + ":" + token + "\n");
    pull = new PullAgent(agent, store, authorizedKeys, Duration.ofMillis(200), Clock.systemUTC());
    registration = new RegistrationPublisher(agent, store, Duration.ofHours(6),
        Clock.systemUTC());
    registration.start();
  }

  @AfterEach
  void stop() {
    pull.close();
    registration.close();
    setup.close();
    agent.close();
    records.close();
  }

  private ObjectNode entry(final String status, final String authorizationB64) {
    final ObjectNode entry = JsonNodeFactory.instance.objectNode();
    entry.put("deploymentToken", token);
    entry.put("profile", "orbitdb-relay");
    entry.put("ownerAddress", owner.address().toString());
    entry.put("instanceItemHash", "ab".repeat(32));
    entry.put("createdAt", Instant.now().toString());
    entry.put("expiresAt", Instant.now().plus(Duration.ofMinutes(30)).toString());
    entry.put("status", status);
    final ObjectNode runtime = entry.putObject("runtime");
    runtime.put("publicIpv4", "127.0.0.1");
    runtime.put("proxyUrl", "https://dragon-belt.2n6.me");
    final ObjectNode ports = runtime.putObject("mappedPorts");
    ports.putObject("9091").put("host", 29091).put("tcp", true);
    ports.putObject("9092").put("host", 29092).put("tcp", true);
    ports.putObject("80").put("host", 28080).put("tcp", true);
    final ObjectNode bootstrap = entry.putObject("bootstrap");
    bootstrap.put("registrationId", "relay:orbitdb-relay:test:" + "ab".repeat(32));
    if (authorizationB64 != null) {
      bootstrap.put("ownerAuthorizationBase64", authorizationB64);
    }
    return entry;
  }

  private void publishEntry(final EthPrivateKey signer, final ObjectNode entry) {
    final ObjectNode entries = JsonNodeFactory.instance.objectNode();
    entries.set(token, entry);
    store.publish(new RecordSigner(signer, Clock.systemUTC())
        .aggregate(GuestRecords.CONFIG_AGGREGATE_KEY, entries, "ALEPH-CLOUDSOLUTIONS"));
  }

  private String authorization(final EthPrivateKey signer, final String publisher,
      final String peerId) {
    final ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("ownerAddress", signer.address().toString());
    payload.put("publisherAddress", publisher);
    payload.put("peerId", peerId);
    payload.put("registrationId", "relay:orbitdb-relay:test:" + "ab".repeat(32));
    payload.put("issuedAt", System.currentTimeMillis());
    payload.put("expiresAt", System.currentTimeMillis() + 3_600_000L);
    final byte[] json = CanonicalJson.writeBytes(SignedPayload.sign(signer, payload).toJson());
    return Base64.getEncoder().encodeToString(json);
  }

  private List<PostRecord> posts(final String type) {
    return store.posts(PostQuery.builder().types(type)
        .addresses(state.publisherKey().address()).build()).posts();
  }

  @Test
  void pull_shouldConfigureAcknowledgeVerifiablyAndCloseSetup_whenTheOwnerPublishes()
      throws Exception {
    publishEntry(owner, entry("pending", null));
    pull.start();
    await().atMost(WAIT).until(pull::acknowledged);

    final GuestAgent.Configured configured = agent.configured().orElseThrow();
    assertThat(configured.source()).isEqualTo(GuestAgent.Source.PULL);
    assertThat(configured.config().proxyHostname()).contains("dragon-belt.2n6.me");
    assertThat(RelayEnvFile.read(state.envFile()))
        .containsEntry("EXTERNAL_RELAY_TCP_PORT", "29091")
        .containsEntry("ALEPH_BOOTSTRAP_OWNER_ADDRESS", owner.address().toString());

    // Anyone can check it: list by type and ref only, verify, compare with the guest's keys.
    final List<PostRecord> acks = store.posts(PostQuery.builder()
        .types(GuestRecords.ACK_POST_TYPE).refs(GuestRecords.ACK_REF).build()).posts();
    assertThat(acks).hasSize(1);
    final Acknowledgement.Verified verified =
        Acknowledgement.verify(acks.get(0), token).orElseThrow();
    assertThat(verified.peerId()).isEqualTo(state.relayPeerId().toBase58());
    assertThat(verified.publisher().toString()).isEqualTo(state.publisherKey().address());
    assertThat(verified.probeMultiaddrs()).contains(
        "/dns4/dragon-belt.2n6.me/tcp/443/tls/ws/p2p/" + verified.peerId());
    assertThat(Acknowledgement.verify(acks.get(0), "another-token")).isEmpty();

    // After a pull, push configuration is closed.
    await().atMost(WAIT).until(() -> setup.closedFuture().isDone());
    assertThatThrownBy(() -> agent.configure(configured.config(), GuestAgent.Source.PUSH).get())
        .hasMessageContaining("already configured");
  }

  @Test
  void pull_shouldIgnoreTheEntry_whenAnotherKeyPublishesItOrItIsNotPending() throws Exception {
    final EthPrivateKey intruder = EthPrivateKey.generate(random);
    publishEntry(intruder, entry("pending", null));
    pull.poll();
    pull.poll();
    assertThat(agent.configured()).isEmpty();

    publishEntry(owner, entry("applied", null));
    pull.poll();
    assertThat(agent.configured()).isEmpty();

    final ObjectNode expired = entry("pending", null);
    expired.put("expiresAt", Instant.now().minusSeconds(1).toString());
    publishEntry(owner, expired);
    pull.poll();
    assertThat(agent.configured()).isEmpty();

    publishEntry(owner, entry("pending", null));
    pull.poll();
    assertThat(agent.configured()).isPresent();
  }

  @Test
  void acknowledgement_shouldNotVerify_whenSignedByAnotherKey() throws Exception {
    publishEntry(owner, entry("pending", null));
    pull.start();
    await().atMost(WAIT).until(pull::acknowledged);
    final PostRecord genuine = store.posts(PostQuery.builder()
        .types(GuestRecords.ACK_POST_TYPE).build()).posts().get(0);

    // A forger copies the guest's content under its own key.
    final EthPrivateKey forger = EthPrivateKey.generate(random);
    store.publish(new RecordSigner(forger, Clock.systemUTC()).post(GuestRecords.ACK_POST_TYPE,
        GuestRecords.ACK_REF, genuine.content(), GuestRecords.CHANNEL));
    // ... or claims the guest's PeerId with its own publisher address and proof.
    final ObjectNode claimed = genuine.content().deepCopy();
    claimed.put("publisherAddress", forger.address().toString());
    final ObjectNode payload = ((ObjectNode) claimed.at("/proof/payload")).deepCopy();
    payload.put("publisherAddress", forger.address().toString());
    claimed.set("proof", SignedPayload.sign(forger, payload).toJson());
    store.publish(new RecordSigner(forger, Clock.systemUTC()).post(GuestRecords.ACK_POST_TYPE,
        GuestRecords.ACK_REF, claimed, GuestRecords.CHANNEL));

    final List<PostRecord> all = store.posts(PostQuery.builder()
        .types(GuestRecords.ACK_POST_TYPE).build()).posts();
    assertThat(all).hasSize(3);
    assertThat(all.stream().map(p -> Acknowledgement.verify(p, token))
        .filter(Optional::isPresent).map(Optional::get).map(v -> v.publisher().toString()))
        .containsExactly(state.publisherKey().address());
  }

  @Test
  void registration_shouldGoFromWalletSignedToDualKey_andBeForgottenOnShutdown()
      throws Exception {
    publishEntry(owner, entry("pending", null));
    pull.start();
    await().atMost(WAIT).until(() -> registration.trustMode()
        .filter(GuestRecords.WALLET_SIGNED::equals).isPresent());
    final List<PostRecord> first = posts(GuestRecords.REGISTRATION_POST_TYPE);
    assertThat(first).hasSize(1);
    final JsonNode content = first.get(0).content();
    final String peerId = state.relayPeerId().toBase58();
    assertThat(content.path("peerId").asText()).isEqualTo(peerId);
    assertThat(content.path("publisherAddress").asText())
        .isEqualTo(state.publisherKey().address());
    assertThat(content.path("trustMode").asText()).isEqualTo("wallet-signed");
    assertThat(content.path("registrationId").asText()).startsWith("relay:orbitdb-relay:test:");
    assertThat(content.path("multiaddrs").toString()).contains("/p2p/" + peerId);
    assertThat(SignedPayload.fromJson(content.get("relayProof"))
        .isSignedBy(state.publisherKey().ethKey().address())).isTrue();
    assertThat(first.get(0).channel()).isEqualTo(GuestRecords.CHANNEL);
    assertThat(first.get(0).ref()).isEqualTo(GuestRecords.REGISTRATION_REF);

    // An authorization signed by another key, or binding another peer, is not applied.
    await().atMost(WAIT).until(pull::acknowledged);
    publishEntry(owner, entry("applied", authorization(EthPrivateKey.generate(random),
        state.publisherKey().address(), peerId)));
    pull.poll();
    publishEntry(owner, entry("applied", authorization(owner, state.publisherKey().address(),
        "12D3KooWAnotherPeerAnotherPeerAnotherPeerAnotherPe")));
    pull.poll();
    assertThat(agent.configured().orElseThrow().config().ownerAuthorizationB64()).isEmpty();

    // The owner's follow-up entry for this guest.
    publishEntry(owner, entry("applied", authorization(owner, state.publisherKey().address(),
        peerId)));
    await().atMost(WAIT).until(() -> registration.trustMode()
        .filter(GuestRecords.DUAL_KEY_ATTESTED::equals).isPresent());
    await().atMost(WAIT).until(() -> posts(GuestRecords.REGISTRATION_POST_TYPE).size() == 1
        && "dual-key-attested".equals(posts(GuestRecords.REGISTRATION_POST_TYPE).get(0)
            .content().path("trustMode").asText()));
    final JsonNode dual = posts(GuestRecords.REGISTRATION_POST_TYPE).get(0).content();
    assertThat(dual.path("ownerAddress").asText()).isEqualTo(owner.address().toString());
    assertThat(SignedPayload.fromJson(dual.get("authorization")).isSignedBy(owner.address()))
        .isTrue();
    assertThat(RelayEnvFile.read(state.envFile()))
        .containsKey("ALEPH_BOOTSTRAP_OWNER_AUTHORIZATION_B64");

    registration.close();
    assertThat(posts(GuestRecords.REGISTRATION_POST_TYPE)).isEmpty();
    assertThat(posts(GuestRecords.ACK_POST_TYPE)).hasSize(1);
  }

  @Test
  void registration_shouldBeReplacedOnRefresh_withOnlyTheNewestListed() throws Exception {
    final RegistrationPublisher fast = new RegistrationPublisher(agent, store,
        Duration.ofMillis(1000), Clock.systemUTC());
    registration.close();
    fast.start();
    try {
      publishEntry(owner, entry("pending", null));
      pull.start();
      await().atMost(WAIT).until(() -> !fast.published().isEmpty());
      final String first = fast.published().get(0);
      await().atMost(WAIT).until(() -> !fast.published().isEmpty()
          && !fast.published().get(0).equals(first));
      await().atMost(WAIT).until(() -> posts(GuestRecords.REGISTRATION_POST_TYPE).size() == 1);
      assertThat(posts(GuestRecords.REGISTRATION_POST_TYPE).get(0).itemHash()).isNotEqualTo(first);
    } finally {
      fast.close();
    }
    assertThat(posts(GuestRecords.REGISTRATION_POST_TYPE)).isEmpty();
  }

  @Test
  void restart_shouldResumeTheStoredConfiguration_andStillApplyALaterAuthorization()
      throws Exception {
    publishEntry(owner, entry("pending", null));
    pull.start();
    await().atMost(WAIT).until(pull::acknowledged);
    pull.close();
    registration.close();
    setup.close();
    agent.close();

    // The same guest started again over its state directory: no setup window, same relay.
    final GuestStateDir again = GuestStateDir.open(dir.resolve("guest"), random);
    final FakeRelayLauncher launcher = new FakeRelayLauncher();
    agent = new GuestAgent(again, launcher, GuestAgent.Settings.DEFAULT, Clock.systemUTC());
    agent.resumeStored().get();
    assertThat(agent.configured().orElseThrow().source()).isEqualTo(GuestAgent.Source.STORED);
    assertThat(agent.configured().orElseThrow().config().tcpPort()).isEqualTo(29091);
    assertThat(launcher.relays).singleElement()
        .satisfies(r -> assertThat(r.peerId()).isEqualTo(state.relayPeerId().toBase58()));
    registration = new RegistrationPublisher(agent, store, Duration.ofHours(6),
        Clock.systemUTC());
    registration.start();
    pull = new PullAgent(agent, store, authorizedKeys, Duration.ofMillis(200), Clock.systemUTC());
    publishEntry(owner, entry("applied", authorization(owner, again.publisherKey().address(),
        again.relayPeerId().toBase58())));
    pull.start();
    await().atMost(WAIT).until(() -> registration.trustMode()
        .filter(GuestRecords.DUAL_KEY_ATTESTED::equals).isPresent());
    assertThat(store.posts(PostQuery.builder().types(GuestRecords.ACK_POST_TYPE).build())
        .posts()).hasSize(1);
  }

  @Test
  void locator_shouldBeRead_whenInTheSshKeyComment() {
    assertThat(BootstrapLocator.parse(List.of("", "# x aleph-bootstrap-config:0x1:t",
        "ssh-ed25519 AAAA aleph-bootstrap-config:" + owner.address() + ":" + token)))
        .contains(new BootstrapLocator(owner.address(), token));
    assertThat(BootstrapLocator.parse(List.of("ssh-ed25519 AAAA user@host"))).isEmpty();
    assertThat(BootstrapLocator.parse(List.of("ssh-ed25519 AAAA aleph-bootstrap-config:nope:t")))
        .isEmpty();
  }
}
