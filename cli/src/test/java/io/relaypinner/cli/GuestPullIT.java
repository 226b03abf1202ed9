package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.guest.Acknowledgement;
import io.relaypinner.handoff.guest.GuestAgent;
import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.guest.GuestStateDir;
import io.relaypinner.handoff.guest.PullAgent;
import io.relaypinner.handoff.guest.RegistrationPublisher;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.client.HttpRecordStore;
import io.relaypinner.handoff.records.service.RecordServer;
import io.relaypinner.handoff.records.service.RecordServiceConfig;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pull handoff end to end: an owner publishes the configuration in the embedded record
 * service (real HTTP, port 0); the guest finds it through its SSH key comment, starts the real
 * relay, acknowledges it verifiably and registers the relay; shutdown forgets the registration.
 */
class GuestPullIT {
  @Test
  void pull_shouldStartTheRelayAcknowledgeAndRegister(@TempDir final Path dir) throws Exception {
    final SecureRandom random = new SecureRandom();
    final EthPrivateKey owner = EthPrivateKey.generate(random);
    final String token = UUID.randomUUID().toString();
    final Path keys = dir.resolve("authorized_keys");
    Files.writeString(keys, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB aleph-bootstrap-config:"
        + owner.address() + ":" + token + "\n");
    try (RecordServer records = RecordServer.open(
        RecordServiceConfig.builder().host("127.0.0.1").port(0).build(), dir.resolve("rec"))) {
      records.start();
      final RecordStore store =
          new HttpRecordStore(URI.create("http://127.0.0.1:" + records.port()));
      final ObjectNode entry = JsonNodeFactory.instance.objectNode();
      entry.put("deploymentToken", token).put("profile", "orbitdb-relay")
          .put("ownerAddress", owner.address().toString())
          .put("instanceItemHash", "cd".repeat(32)).put("status", "pending")
          .put("expiresAt", Instant.now().plusSeconds(1800).toString());
      final ObjectNode runtime = entry.putObject("runtime").put("publicIpv4", "127.0.0.1");
      runtime.putObject("mappedPorts").set("9091", JsonNodeFactory.instance.objectNode()
          .put("host", 29091));
      ((ObjectNode) runtime.get("mappedPorts")).putObject("9092").put("host", 29092);
      final ObjectNode entries = JsonNodeFactory.instance.objectNode();
      entries.set(token, entry);
      store.publish(new RecordSigner(owner, Clock.systemUTC())
          .aggregate(GuestRecords.CONFIG_AGGREGATE_KEY, entries, "ALEPH-CLOUDSOLUTIONS"));

      final GuestStateDir state = GuestStateDir.open(dir.resolve("guest"), random);
      final String publisher = state.publisherKey().address();
      final String relayPeer;
      try (GuestAgent agent = new GuestAgent(state,
          new RelayNodeLauncher(GuestSetupServerIT.RELAY_ENV), GuestAgent.Settings.DEFAULT,
          Clock.systemUTC())) {
        final RegistrationPublisher registration =
            new RegistrationPublisher(agent, store, Duration.ofHours(6), Clock.systemUTC());
        registration.start();
        try (PullAgent pull =
            new PullAgent(agent, store, keys, Duration.ofMillis(200), Clock.systemUTC())) {
          pull.start();
          await().atMost(Duration.ofSeconds(60)).until(pull::acknowledged);
        }
        final List<PostRecord> acks = store.posts(PostQuery.builder()
            .types(GuestRecords.ACK_POST_TYPE).refs(GuestRecords.ACK_REF).build()).posts();
        final Acknowledgement.Verified ack =
            Acknowledgement.verify(acks.get(0), token).orElseThrow();
        final int httpPort =
            agent.configured().orElseThrow().relay().orElseThrow().httpPort().getAsInt();
        final String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + httpPort + "/health")).build(),
            HttpResponse.BodyHandlers.ofString()).body();
        relayPeer = new ObjectMapper().readTree(body).path("peerId").asText();
        assertThat(relayPeer).isEqualTo(ack.peerId());
        assertThat(ack.publisher().toString()).isEqualTo(publisher);

        await().atMost(Duration.ofSeconds(30)).until(() -> !registrations(store, publisher)
            .isEmpty());
        assertThat(registrations(store, publisher).get(0).content().path("peerId").asText())
            .isEqualTo(relayPeer);
        assertThat(registrations(store, publisher).get(0).content().path("trustMode").asText())
            .isEqualTo(GuestRecords.WALLET_SIGNED);
        registration.close();
      }
      assertThat(registrations(store, publisher)).isEmpty();
    }
  }

  private static List<PostRecord> registrations(final RecordStore store, final String sender) {
    return store.posts(PostQuery.builder().types(GuestRecords.REGISTRATION_POST_TYPE)
        .addresses(sender).build()).posts();
  }
}
