package io.relaypinner.handoff.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.handoff.guest.Acknowledgement;
import io.relaypinner.handoff.guest.GuestAddresses;
import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.guest.GuestStateDir;
import io.relaypinner.handoff.guest.OwnerAuthorization;
import io.relaypinner.handoff.records.MessageVerifier;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.service.LocalRecordStore;
import io.relaypinner.handoff.records.service.MemoryRecordStorage;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller against a fake provider (instances whose ports lead nowhere) and the record
 * engine in process: decisions, cleanup and acknowledgement checks, without guest processes.
 */
class DeployControllerTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final URI RECORDS = URI.create("http://127.0.0.1:1");

  @TempDir
  Path dir;

  private final LocalRecordStore store =
      new LocalRecordStore(new MemoryRecordStorage(), new MessageVerifier(), 10_000);
  private final EthPrivateKey wallet = EthPrivateKey.generate(RANDOM);
  private final List<String> stages = new ArrayList<>();

  @AfterEach
  void close() {
    store.close();
  }

  /** Offers {@code slots} hosts; every instance's ports are closed; calls a hook on create. */
  private static final class FakeProvider implements HostProvider {
    final int slots;
    final List<InstanceRequest> created = new ArrayList<>();
    final List<String> erased = new ArrayList<>();
    Consumer<HostInstance> onCreate = instance -> { };
    Optional<Boolean> running = Optional.empty();

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
              9091, PortMapping.tcp(dead), 9092, PortMapping.tcp(dead)));
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
        (stage, detail, percent) -> stages.add(stage), RANDOM);
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

  @Test
  void deploy_shouldIgnoreAcknowledgement_whenNotSignedByThePublisherItNames() throws Exception {
    final GuestStateDir guest = GuestStateDir.open(dir.resolve("guest"), RANDOM);
    final RecordSigner forger = new RecordSigner(EthPrivateKey.generate(RANDOM),
        Clock.systemUTC());
    final FakeProvider provider = new FakeProvider(1);
    provider.onCreate = instance -> { };
    final DeployController controller = controller(provider, quick()
        .ackTimeout(Duration.ofSeconds(2)).build());
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
    try {
      assertThatThrownBy(() -> controller.deploy(ImageManifest.BUILT_IN, RECORDS,
          SshKeys.throwawayKey()))
          .isInstanceOfSatisfying(DeployFailedException.class, e -> assertThat(e.attempts())
              .singleElement().satisfies(a -> assertThat(a.stage())
                  .isEqualTo("waiting-for-acknowledgement")));
    } finally {
      forge.interrupt();
      forge.join();
    }
    assertThat(store.posts(PostQuery.builder().types(GuestRecords.ACK_POST_TYPE).build())
        .posts()).hasSize(1);
    assertThat(stages).doesNotContain("authorizing");
  }

  @Test
  void deploy_shouldAuthorizeTheAcknowledgingGuest_whenAcknowledgementVerifies()
      throws Exception {
    final GuestStateDir guest = GuestStateDir.open(dir.resolve("guest"), RANDOM);
    final RecordSigner guestSigner =
        new RecordSigner(guest.publisherKey().ethKey(), Clock.systemUTC());
    final FakeProvider provider = new FakeProvider(1);
    final List<String> authorizations = new ArrayList<>();
    final Thread ack = new Thread(() -> {
      String token = null;
      while (!Thread.currentThread().isInterrupted()) {
        final Optional<JsonNode> entries = store.aggregate(wallet.address(),
            GuestRecords.CONFIG_AGGREGATE_KEY);
        if (entries.isPresent() && entries.get().size() > 0) {
          final String current = entries.get().fieldNames().next();
          final JsonNode entry = entries.get().get(current);
          if (token == null) {
            token = current;
            store.publish(guestSigner.post(GuestRecords.ACK_POST_TYPE, GuestRecords.ACK_REF,
                Acknowledgement.content(entry, token, guest, GuestAddresses.NONE,
                    Optional.empty(), Instant.now()), GuestRecords.CHANNEL));
          } else if (entry != null && entry.path("bootstrap").path("ownerAuthorizationBase64")
              .isTextual()) {
            authorizations.add(entry.path("bootstrap").path("ownerAuthorizationBase64")
                .asText());
            return;
          }
        }
        try {
          Thread.sleep(10);
        } catch (final InterruptedException e) {
          return;
        }
      }
    });
    ack.start();
    try {
      assertThatThrownBy(() -> controller(provider, quick().ackTimeout(Duration.ofSeconds(5))
          .build()).deploy(ImageManifest.BUILT_IN, RECORDS, SshKeys.throwawayKey()))
          .isInstanceOfSatisfying(DeployFailedException.class, e -> assertThat(e.attempts())
              .singleElement().satisfies(a -> {
                // The fake instance runs no relay: accepted, authorized, then not reachable.
                assertThat(a.stage()).isEqualTo("verifying-relay");
                assertThat(a.forgotten()).hasSize(3);
              }));
    } finally {
      ack.interrupt();
      ack.join();
    }
    assertThat(authorizations).singleElement().satisfies(b64 -> {
      final OwnerAuthorization verified = OwnerAuthorization.verify(b64, wallet.address(),
          guest.publisherKey().ethKey().address(), guest.relayPeerId().toBase58(),
          Clock.systemUTC());
      assertThat(verified.owner()).isEqualTo(wallet.address());
      assertThatThrownBy(() -> OwnerAuthorization.verify(b64, wallet.address(),
          EthPrivateKey.generate(RANDOM).address(), guest.relayPeerId().toBase58(),
          Clock.systemUTC())).isInstanceOf(OwnerAuthorization.InvalidAuthorizationException.class);
    });
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
