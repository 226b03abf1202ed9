package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.cli.FaultyHostProvider.Fault;
import io.relaypinner.handoff.deploy.AttemptResult;
import io.relaypinner.handoff.deploy.DeployConfig;
import io.relaypinner.handoff.deploy.DeployController;
import io.relaypinner.handoff.deploy.DeployFailedException;
import io.relaypinner.handoff.deploy.DeployResult;
import io.relaypinner.handoff.deploy.DeployWallet;
import io.relaypinner.handoff.deploy.HandoffMode;
import io.relaypinner.handoff.deploy.ImageManifest;
import io.relaypinner.handoff.deploy.Libp2pPeerHandshake;
import io.relaypinner.handoff.deploy.LocalHostProvider;
import io.relaypinner.handoff.deploy.SshKeys;
import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.guest.OwnerAuthorization;
import io.relaypinner.handoff.records.MessageVerifier;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.client.HttpRecordStore;
import io.relaypinner.handoff.records.service.LocalRecordStore;
import io.relaypinner.handoff.records.service.MemoryRecordStorage;
import io.relaypinner.handoff.records.service.RecordServer;
import io.relaypinner.handoff.records.service.RecordServiceConfig;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deployer end to end: the local provider running real {@code relay-pinner guest
 * setup-server} processes (ephemeral ports, temporary directories), an embedded record service,
 * push and pull, chosen host failures. Every guest process is erased after each test, and the
 * test JVM kills any descendant left on exit.
 */
class DeployLocalIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** Light guest JVMs: the machine runs several at once. */
  private static final List<String> GUEST_JVM = List.of("-Xmx256m", "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1");

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> ProcessHandle.current().descendants()
        .forEach(ProcessHandle::destroyForcibly)));
  }

  @TempDir
  Path dir;

  private RecordServer records;
  private URI recordsUrl;
  private RecordStore store;
  private LocalHostProvider local;
  private final EthPrivateKey wallet = EthPrivateKey.generate(new SecureRandom());
  private final List<String> stages = new CopyOnWriteArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private FaultyHostProvider faulty;
  private final Libp2pPeerHandshake handshake =
      new Libp2pPeerHandshake(new SecureRandom(), Duration.ofSeconds(5));

  @BeforeEach
  void start() {
    records = new RecordServer(RecordServiceConfig.builder().host("127.0.0.1").port(0).build(),
        new LocalRecordStore(new MemoryRecordStorage(), new MessageVerifier(), 100_000));
    recordsUrl = URI.create("http://127.0.0.1:" + records.start().getPort());
    store = new HttpRecordStore(recordsUrl);
    local = new LocalHostProvider(LocalHostProvider.Settings.defaults(dir.resolve("deployments"))
        .withGuestCommand(LocalHostProvider.currentJvmCommand(GUEST_JVM)), Clock.systemUTC());
  }

  @AfterEach
  void stop() {
    if (faulty != null) {
      faulty.closeProxies();
    }
    for (final LocalHostProvider.LocalInstance instance : local.list()) {
      local.erase(instance.id());
    }
    records.close();
    handshake.close();
  }

  private DeployController controller(final FaultyHostProvider provider,
      final DeployConfig config) {
    this.faulty = provider;
    return new DeployController(provider, store, wallet, config, Clock.systemUTC(),
        (stage, detail, percent) -> stages.add(stage), new SecureRandom(), handshake);
  }

  private static DeployConfig.Builder fast() {
    return DeployConfig.builder().setupAttempts(40).setupBackoff(Duration.ofMillis(250))
        .pollInterval(Duration.ofMillis(300)).relayTimeout(Duration.ofSeconds(60))
        .registrationTimeout(Duration.ofSeconds(60)).ackTimeout(Duration.ofSeconds(90));
  }

  private DeployResult deploy(final List<Fault> faults, final DeployConfig config,
      final ImageManifest manifest) throws InterruptedException {
    return controller(new FaultyHostProvider(local, faults), config)
        .deploy(manifest, recordsUrl, SshKeys.throwawayKey());
  }

  @Test
  void deploy_shouldEndWithHealthyDualKeyRelay_whenPush() throws Exception {
    final DeployResult result = deploy(List.of(), fast().handoff(HandoffMode.PUSH).build(),
        ImageManifest.BUILT_IN);

    assertHealthyDualKeyRelay(result, HandoffMode.PUSH);
    assertThat(stages).contains("waiting-for-setup-endpoint", "reading-metadata", "configuring")
        .doesNotContain("publishing-config");
  }

  @Test
  void deploy_shouldEndWithHealthyDualKeyRelay_whenPull() throws Exception {
    final DeployResult result = deploy(List.of(), fast().build(), ImageManifest.BUILT_IN);

    assertHealthyDualKeyRelay(result, HandoffMode.PULL);
    assertThat(stages).contains("publishing-config", "waiting-for-acknowledgement")
        .doesNotContain("waiting-for-setup-endpoint", "configuring");
    // Done: the entry with the public facts is removed and its messages forgotten.
    assertThat(store.aggregate(wallet.address(), GuestRecords.CONFIG_AGGREGATE_KEY)
        .map(JsonNode::size).orElse(0)).isZero();
  }

  private void assertHealthyDualKeyRelay(final DeployResult result, final HandoffMode handoff)
      throws Exception {
    assertThat(result.ok()).isTrue();
    assertThat(result.handoff()).isEqualTo(handoff);
    assertThat(result.attempts()).hasSize(1);
    final DeployResult.Relay relay = result.relay().orElseThrow();
    final HttpResponse<String> health = http.send(HttpRequest.newBuilder(
        URI.create(relay.httpUrl() + "/health")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(health.body()).path("peerId").asText()).isEqualTo(relay.peerId());

    // The guest's real identities, from its own state directory.
    final LocalHostProvider.LocalInstance instance = local.list().stream()
        .filter(i -> i.id().equals(relay.instanceId())).findFirst().orElseThrow();
    assertThat(instance.alive()).isTrue();
    final Path state = instance.directory().resolve("state");
    final String publisherKey = Files.readString(state.resolve("keys/publisher.key")).strip();
    final EthAddress publisher = EthPrivateKey.parse(publisherKey).address();
    assertThat(relay.publisherAddress()).isEqualTo(publisher.toString());

    // The owner authorization the guest holds verifies against its real PeerId and publisher.
    final String b64 = Files.readAllLines(state.resolve("relay.env")).stream()
        .filter(l -> l.startsWith("ALEPH_BOOTSTRAP_OWNER_AUTHORIZATION_B64="))
        .map(l -> l.substring(l.indexOf('=') + 1)).findFirst().orElseThrow();
    final OwnerAuthorization authorization = OwnerAuthorization.verify(b64, wallet.address(),
        publisher, relay.peerId(), Clock.systemUTC());
    assertThat(authorization.owner()).isEqualTo(wallet.address());
    assertThat(authorization.json().path("payload").path("registrationId").asText())
        .isEqualTo(relay.registrationId());

    // The guest's registration, checked here, is dual-key-attested.
    assertThat(relay.trustMode()).contains(GuestRecords.DUAL_KEY_ATTESTED);
    final List<PostRecord> registrations = store.posts(PostQuery.builder()
        .types(GuestRecords.REGISTRATION_POST_TYPE).addresses(publisher.toString()).build())
        .posts();
    assertThat(registrations).anySatisfy(post -> {
      assertThat(post.itemHash()).isEqualTo(relay.registrationHash().orElseThrow());
      assertThat(post.content().path("trustMode").asText())
          .isEqualTo(GuestRecords.DUAL_KEY_ATTESTED);
      assertThat(post.content().path("peerId").asText()).isEqualTo(relay.peerId());
    });
  }

  @Test
  void deploy_shouldSucceedOnThirdHost_whenFirstNeverHealthyAndSecondNeverAcknowledges()
      throws Exception {
    final DeployResult result = deploy(List.of(Fault.NEVER_HEALTHY, Fault.NEVER_ACKNOWLEDGE),
        fast().ackTimeout(Duration.ofSeconds(15)).relayTimeout(Duration.ofSeconds(10)).build(),
        ImageManifest.BUILT_IN);

    assertThat(result.ok()).isTrue();
    assertThat(result.attempts()).extracting(AttemptResult::ok)
        .containsExactly(false, false, true);
    final AttemptResult first = result.attempts().get(0);
    final AttemptResult second = result.attempts().get(1);
    assertThat(first.stage()).isEqualTo("verifying-relay");
    assertThat(first.reason().orElseThrow()).contains("never answered");
    assertThat(second.stage()).isEqualTo("waiting-for-acknowledgement");
    assertThat(second.reason().orElseThrow()).contains("no verified acknowledgement");
    assertFailedAttemptsCleanedUp(result.attempts().subList(0, 2));
    assertThat(local.list()).extracting(LocalHostProvider.LocalInstance::id)
        .containsExactly(result.relay().orElseThrow().instanceId());
    assertThat(result.relay().orElseThrow().trustMode())
        .contains(GuestRecords.DUAL_KEY_ATTESTED);
    // The first guest was configured and registered before it failed the relay check; its
    // registration was forgotten when it was erased (SIGTERM).
    final List<PostRecord> registrations = store.posts(PostQuery.builder()
        .types(GuestRecords.REGISTRATION_POST_TYPE).pagination(100).build()).posts();
    assertThat(registrations).allSatisfy(post -> assertThat(post.content()
        .path("registrationId").asText()).isEqualTo(result.relay().orElseThrow()
            .registrationId()));
  }

  @Test
  void deploy_shouldSucceedOnSecondHost_whenFirstDiesDuringConfigure() throws Exception {
    final DeployResult result = deploy(List.of(Fault.DIE_DURING_CONFIGURE),
        fast().handoff(HandoffMode.PUSH).build(), ImageManifest.BUILT_IN);

    assertThat(result.attempts()).extracting(AttemptResult::ok).containsExactly(false, true);
    assertThat(result.attempts().get(0).stage()).isEqualTo("configuring");
    assertThat(result.attempts().get(0).reason().orElseThrow()).contains("POST /configure");
    assertFailedAttemptsCleanedUp(result.attempts().subList(0, 1));
    assertThat(result.relay().orElseThrow().trustMode())
        .contains(GuestRecords.DUAL_KEY_ATTESTED);
  }

  @Test
  void deploy_shouldFailWithAllHostsFailed_whenFiveCandidatesFail() throws Exception {
    final List<Fault> faults = List.of(Fault.NEVER_HEALTHY, Fault.NEVER_HEALTHY,
        Fault.NEVER_HEALTHY, Fault.NEVER_HEALTHY, Fault.NEVER_HEALTHY, Fault.NEVER_HEALTHY);
    final FaultyHostProvider provider = new FaultyHostProvider(local, faults);
    final DeployController controller = controller(provider, fast().handoff(HandoffMode.PUSH)
        .setupAttempts(2).setupBackoff(Duration.ofMillis(100)).build());

    assertThatThrownBy(() -> controller.deploy(ImageManifest.BUILT_IN, recordsUrl,
        SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> {
          assertThat(e.code()).isEqualTo(DeployFailedException.ALL_HOSTS_FAILED);
          assertThat(e.getMessage()).startsWith("all compatible hosts failed (5 tried)");
          assertThat(e.attempts()).hasSize(5).allSatisfy(a -> {
            assertThat(a.ok()).isFalse();
            assertThat(a.reason().orElseThrow()).contains("never became healthy");
          });
          assertThat(e.result().toJson().path("ok").asBoolean(true)).isFalse();
        });
    assertThat(provider.created()).hasSize(5);
    assertThat(provider.erased()).containsExactlyElementsOf(provider.created());
    assertThat(local.list()).isEmpty();
  }

  @Test
  void deploy_shouldFailBeforeAnyHost_whenHttpsOriginAndPushOnlyImage() {
    final ImageManifest pushOnly = new ImageManifest("orbitdb-relay", "orbitdb-relay-v0.9.7",
        false, ImageManifest.RELAY_PORTS);
    final FaultyHostProvider provider = new FaultyHostProvider(local, List.of());
    final DeployController controller = controller(provider,
        fast().origin(URI.create("https://deployer.example")).build());

    assertThatThrownBy(() -> controller.deploy(pushOnly, recordsUrl, SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> {
          assertThat(e.code()).isEqualTo(DeployFailedException.MIXED_CONTENT);
          assertThat(e.getMessage()).contains("mixed content", "supportsBootstrapConfigAggregate",
              "plain HTTP");
          assertThat(e.attempts()).isEmpty();
        });
    assertThat(provider.created()).isEmpty();
  }

  @Test
  void deploy_shouldFailAfterShortenedWait_whenPullNeverAcknowledged() throws Exception {
    final FaultyHostProvider provider =
        new FaultyHostProvider(local, List.of(Fault.NEVER_ACKNOWLEDGE));
    final DeployController controller = controller(provider,
        fast().maxCandidates(1).ackTimeout(Duration.ofSeconds(5)).build());

    assertThatThrownBy(() -> controller.deploy(ImageManifest.BUILT_IN, recordsUrl,
        SshKeys.throwawayKey()))
        .isInstanceOfSatisfying(DeployFailedException.class, e -> {
          assertThat(e.code()).isEqualTo(DeployFailedException.ALL_HOSTS_FAILED);
          assertThat(e.attempts()).singleElement().satisfies(a -> {
            assertThat(a.stage()).isEqualTo("waiting-for-acknowledgement");
            assertThat(a.reason().orElseThrow()).contains("within 5 s");
          });
          assertFailedAttemptsCleanedUp(e.attempts());
        });
    assertThat(local.list()).isEmpty();
  }

  @Test
  void deploy_shouldUseTheDerivedPublisherKey_whenTheGuestHasNoneInUse() throws Exception {
    final FaultyHostProvider provider = new FaultyHostProvider(local, List.of());
    final DeployController controller = controller(provider, fast().handoff(HandoffMode.PUSH)
        .derivePublisherKey(true).maxCandidates(1).build());

    // Spec 2.9: a fresh guest has no publisher key in use, so it takes the supplied one, and the
    // authorization signed for the derived address verifies.
    final DeployResult result = controller.deploy(ImageManifest.BUILT_IN, recordsUrl,
        SshKeys.throwawayKey());

    final String derived = DeployWallet.derivePublisherKey(wallet, ImageManifest.BUILT_IN
        .profile()).address().toString();
    assertThat(result.relay().orElseThrow().publisherAddress()).isEqualTo(derived);
    assertThat(result.relay().orElseThrow().trustMode())
        .contains(GuestRecords.DUAL_KEY_ATTESTED);
    assertThat(result.warnings()).anySatisfy(w ->
        assertThat(w).contains("publisher private key was sent in plain HTTP"));
  }

  /** Erased, nothing left in the store: no entry, no message of the deployer for it. */
  private void assertFailedAttemptsCleanedUp(final List<AttemptResult> attempts) {
    for (final AttemptResult attempt : attempts) {
      assertThat(attempt.erased()).as("erased %s", attempt.instanceId()).isTrue();
      assertThat(attempt.cleanupErrors()).isEmpty();
      assertThat(Files.exists(local.settings().baseDir().resolve(attempt.instanceId()
          .orElseThrow()))).isFalse();
      for (final String hash : attempt.forgotten()) {
        assertThat(store.posts(PostQuery.builder().hashes(hash).build()).posts()).isEmpty();
      }
    }
    assertThat(store.aggregate(wallet.address(), GuestRecords.CONFIG_AGGREGATE_KEY)
        .map(JsonNode::size).orElse(0)).as("entries left").isLessThanOrEqualTo(0);
  }

  @Test
  void main_shouldDeployListAndErase_whenNoOptions() throws Exception {
    final Path deployments = dir.resolve("cli-deployments");
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();
    final int code = Main.execute(new String[] {"deploy", "--deployments-dir",
        deployments.toString(), "--registration-timeout", "60000"}, Map.of(),
        new PrintWriter(out, true), new PrintWriter(err, true));

    assertThat(code).as(err.toString()).isZero();
    final String[] lines = out.toString().strip().split("\n");
    final JsonNode result = JSON.readTree(lines[lines.length - 1]);
    assertThat(result.path("ok").asBoolean()).isTrue();
    assertThat(result.path("handoff").asText()).isEqualTo("pull");
    assertThat(result.path("relay").path("peerId").asText()).startsWith("12D3KooW");
    assertThat(err.toString()).contains("deploy [ 35%] waiting-for-acknowledgement",
        "deploy [100%] completed");
    assertThat(PosixFilePermissions.toString(
        Files.getPosixFilePermissions(deployments.resolve("wallet.key")))).isEqualTo("rw-------");
    final HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create(
        result.path("relay").path("httpUrl").asText() + "/health")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(200);

    final StringWriter listed = new StringWriter();
    assertThat(Main.execute(new String[] {"deploy", "list", "--json", "--deployments-dir",
        deployments.toString()}, Map.of(), new PrintWriter(listed, true),
        new PrintWriter(new StringWriter(), true))).isZero();
    final JsonNode list = JSON.readTree(listed.toString());
    assertThat(list).hasSize(1);
    assertThat(list.get(0).path("running").asBoolean()).isTrue();
    assertThat(list.get(0).path("deployment").path("relay").path("peerId").asText())
        .isEqualTo(result.path("relay").path("peerId").asText());
    final long pid = list.get(0).path("pid").asLong();

    assertThat(Main.execute(new String[] {"deploy", "erase", "--deployments-dir",
        deployments.toString(), result.path("deploymentId").asText()}, Map.of(),
        new PrintWriter(new StringWriter(), true), new PrintWriter(new StringWriter(), true)))
        .isZero();
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
    assertThat(new LocalHostProvider(LocalHostProvider.Settings.defaults(deployments),
        Clock.systemUTC()).list()).isEmpty();
    assertThat(Main.execute(new String[] {"deploy", "erase", "--deployments-dir",
        deployments.toString(), result.path("deploymentId").asText()}, Map.of(),
        new PrintWriter(new StringWriter(), true), new PrintWriter(new StringWriter(), true)))
        .isEqualTo(Main.EXIT_FAILURE);
  }
}
