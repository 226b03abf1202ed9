package io.relaypinner.handoff.records;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.records.client.HttpRecordStore;
import io.relaypinner.handoff.records.service.LocalRecordStore;
import io.relaypinner.handoff.records.service.MemoryRecordStorage;
import io.relaypinner.handoff.records.service.RecordServer;
import io.relaypinner.handoff.records.service.RecordServiceConfig;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import io.relaypinner.testkit.NodeJs;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whole Aleph messages between Java and ethers 6 ({@code interop/js/handoff/eth-values.mjs}): JS
 * builds AGGREGATE, POST and FORGET messages the way the public deployer's core library does
 * ({@code JSON.stringify} content, SHA-256, {@code signMessage} of the verification text) and the
 * embedded record service accepts them over HTTP with the expected effects; Java's
 * {@link RecordSigner} messages pass ethers' hash and signer checks, and their JCS
 * {@code item_content} parses in JS to the content Java meant.
 */
class AlephMessagesInteropIT {
  private static final String KEY = HandoffNames.CONFIG_AGGREGATE_KEY;

  @TempDir
  Path dir;

  @Test
  void messages_shouldVerifyBothWays_andEthersMessagesShouldDriveTheService() throws Exception {
    final EthPrivateKey owner = EthPrivateKey.generate(new SecureRandom());
    final EthPrivateKey guest = EthPrivateKey.generate(new SecureRandom());
    final RecordSigner javaOwner = new RecordSigner(owner, new TickingClock(1_784_808_100_000L));

    final ObjectNode input = JsonNodeFactory.instance.objectNode();
    final ArrayNode js = input.putArray("alephMessages");
    final ObjectNode first = js.addObject().put("key", owner.toHex()).put("type", "AGGREGATE")
        .put("channel", "ALEPH-CLOUDSOLUTIONS").put("time", 1784808000.123);
    first.putObject("content").put("key", KEY).putObject("content").putObject("token-1")
        .put("deploymentToken", "token-1").put("status", "pending").put("expiresAt",
            "2026-07-23T12:30:00.000Z");
    final ObjectNode second = js.addObject().put("key", owner.toHex()).put("type", "AGGREGATE")
        .put("channel", "ALEPH-CLOUDSOLUTIONS").put("time", 1784808001);
    second.putObject("content").put("key", KEY).putObject("content").putObject("token-2")
        .put("deploymentToken", "token-2").put("status", "pending");
    final ObjectNode ack = js.addObject().put("key", guest.toHex()).put("type", "POST")
        .put("channel", "simple-todo").put("time", 1784808250123L);
    ack.putObject("content").put("type", HandoffNames.ACK_POST_TYPE)
        .put("ref", HandoffNames.ACK_REF).putObject("content").put("deploymentToken", "token-1")
        .put("status", "applied").put("peerId", "12D3KooWExample");

    final List<AlephMessage> javaMessages = new ArrayList<>();
    final ObjectNode entries = JsonNodeFactory.instance.objectNode();
    entries.putObject("tok\u00e9n \ud83d\ude00").put("status", "pending").put("n", 1.5e-7);
    javaMessages.add(javaOwner.aggregate(KEY, entries, "TEST"));
    javaMessages.add(javaOwner.deleteAggregateEntries(KEY, List.of("token-1"), null));
    javaMessages.add(javaOwner.post(HandoffNames.ACK_POST_TYPE, HandoffNames.ACK_REF,
        JsonNodeFactory.instance.objectNode().put("line", "a\nb\t\"c\""), "simple-todo"));
    javaMessages.add(javaOwner.forget(List.of(javaMessages.get(2).itemHash()), List.of(KEY),
        "failed attempt", null));
    final ArrayNode verify = input.putArray("verifyAleph");
    javaMessages.forEach(message -> verify.add(message.toJson()));

    final Path file = dir.resolve("input.json");
    Files.write(file, RecordJson.MAPPER.writeValueAsBytes(input));
    final JsonNode out = RecordJson.MAPPER.readTree(NodeJs.run("handoff", "eth-values.mjs",
        Duration.ofSeconds(60), file.toString()).stdout());

    // Java's messages in ethers: hash and signer check out, content reads as Java meant.
    final JsonNode verified = out.get("alephVerified");
    for (int i = 0; i < javaMessages.size(); i++) {
      final AlephMessage message = javaMessages.get(i);
      assertThat(verified.get(i).get("hashOk").asBoolean()).isTrue();
      assertThat(verified.get(i).get("signer").asText()).isEqualTo(owner.address().toString());
      assertThat(verified.get(i).get("content"))
          .isEqualTo(RecordJson.MAPPER.readTree(message.itemContent()));
    }

    // Ethers' messages in Java: verified, then published to the service over HTTP.
    final List<AlephMessage> jsMessages = new ArrayList<>();
    out.get("alephMessages").forEach(node -> jsMessages.add(AlephMessage.fromJson(node)));
    final MessageVerifier verifier = new MessageVerifier();
    assertThat(verifier.verify(jsMessages.get(0)).sender()).isEqualTo(owner.address());
    assertThat(verifier.verify(jsMessages.get(2)).sender()).isEqualTo(guest.address());

    try (RecordServer server = new RecordServer(RecordServiceConfig.builder().port(0).build(),
        new LocalRecordStore(new MemoryRecordStorage(), verifier, 1000))) {
      final HttpRecordStore client = new HttpRecordStore(
          URI.create("http://127.0.0.1:" + server.start().getPort()));
      jsMessages.forEach(client::publish);
      final JsonNode aggregate = client.aggregate(owner.address(), KEY).orElseThrow();
      assertThat(aggregate.at("/token-1/status").asText()).isEqualTo("pending");
      assertThat(aggregate.at("/token-2/status").asText()).isEqualTo("pending");
      final PostRecord post = client.posts(PostQuery.builder().types(HandoffNames.ACK_POST_TYPE)
          .refs(HandoffNames.ACK_REF).build()).posts().get(0);
      assertThat(post.content().path("peerId").asText()).isEqualTo("12D3KooWExample");
      assertThat(verifier.verify(post.toMessage()).sender()).isEqualTo(guest.address());

      // Java's delete form applies on top of the JS-made aggregate.
      client.publish(javaMessages.get(1));
      assertThat(client.aggregateEntry(owner.address(), KEY, "token-1")).isEmpty();
      assertThat(client.aggregateEntry(owner.address(), KEY, "token-2")).isPresent();
    }
  }
}
