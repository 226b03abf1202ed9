package io.relaypinner.handoff.records.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.ErrorCodes;
import io.relaypinner.handoff.records.MessageVerifier;
import io.relaypinner.handoff.records.PostPage;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.TickingClock;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LocalRecordStoreTest {
  private static final String KEY = "vm-bootstrap-config";

  private final TickingClock clock = new TickingClock(1_784_808_000_000L);
  private final RecordSigner owner =
      new RecordSigner(EthPrivateKey.generate(new SecureRandom()), clock);
  private final RecordSigner guest =
      new RecordSigner(EthPrivateKey.generate(new SecureRandom()), clock);
  private final LocalRecordStore store =
      new LocalRecordStore(new MemoryRecordStorage(), new MessageVerifier(), 1000);

  private static ObjectNode entry(final String name, final String status) {
    final ObjectNode entries = JsonNodeFactory.instance.objectNode();
    entries.putObject(name).put("deploymentToken", name).put("status", status);
    return entries;
  }

  private static RecordRejectedException rejection(final Runnable action) {
    try {
      action.run();
    } catch (final RecordRejectedException e) {
      return e;
    }
    throw new AssertionError("accepted");
  }

  @Test
  void aggregates_shouldMergeEntriesInTimeOrder_andDeleteNullEntries() {
    store.publish(owner.aggregate(KEY, entry("t1", "pending"), null));
    store.publish(owner.aggregate(KEY, entry("t2", "pending"), null));
    store.publish(owner.aggregate(KEY, entry("t1", "applied"), null));
    store.publish(owner.aggregate("port-forwarding", entry("h", "x"), null));

    final JsonNode merged = store.aggregate(owner.address(), KEY).orElseThrow();
    assertThat(merged.fieldNames()).toIterable().containsExactlyInAnyOrder("t1", "t2");
    assertThat(merged.at("/t1/status").asText()).isEqualTo("applied");
    assertThat(store.aggregates(owner.address(), List.of())).containsOnlyKeys(KEY,
        "port-forwarding");

    store.publish(owner.deleteAggregateEntries(KEY, List.of("t1"), null));
    final JsonNode afterDelete = store.aggregate(owner.address(), KEY).orElseThrow();
    assertThat(afterDelete.has("t1")).isFalse();
    assertThat(afterDelete.has("t2")).isTrue();
    assertThat(store.aggregateEntry(owner.address(), KEY, "t1")).isEmpty();
    assertThat(store.aggregateEntry(owner.address(), KEY, "t2")).isPresent();
    // Another owner's aggregate is separate.
    assertThat(store.aggregates(guest.address(), List.of(KEY))).isEmpty();
  }

  @Test
  void aggregates_shouldApplyAnOlderMessageBeforeANewerOne_whateverTheArrivalOrder() {
    final AlephMessage first = owner.aggregate(KEY, entry("t", "first"), null);
    final AlephMessage second = owner.aggregate(KEY, entry("t", "second"), null);
    store.publish(second);
    store.publish(first);
    assertThat(store.aggregateEntry(owner.address(), KEY, "t").orElseThrow().path("status")
        .asText()).isEqualTo("second");
  }

  @Test
  void posts_shouldFilterByTypeRefAddressAndChannel_newestFirst() {
    final JsonNode body = JsonNodeFactory.instance.objectNode().put("status", "applied");
    final AlephMessage ack = guest.post("vm-bootstrap-config-status", KEY, body, "simple-todo");
    final AlephMessage signal = guest.post("vm-bootstrap-config-signal", KEY, body, "simple-todo");
    final AlephMessage otherRef = guest.post("vm-bootstrap-config-status", "other", body,
        "simple-todo");
    final AlephMessage otherChannel = guest.post("vm-bootstrap-config-status", KEY, body, "TEST");
    final AlephMessage byOwner = owner.post("vm-bootstrap-config-status", KEY, body,
        "simple-todo");
    for (final AlephMessage message : List.of(ack, signal, otherRef, otherChannel, byOwner)) {
      store.publish(message);
    }
    final PostPage acks = store.posts(PostQuery.builder().types("vm-bootstrap-config-status")
        .refs(KEY).channels("simple-todo").build());
    assertThat(acks.posts()).extracting(PostRecord::itemHash)
        .containsExactly(byOwner.itemHash(), ack.itemHash());
    assertThat(acks.total()).isEqualTo(2);
    final PostPage guestOnly = store.posts(PostQuery.builder().types("vm-bootstrap-config-status")
        .refs(KEY).channels("simple-todo").addresses(guest.address().toLowerHex()).build());
    assertThat(guestOnly.posts()).extracting(PostRecord::itemHash)
        .containsExactly(ack.itemHash());
    final PostRecord post = guestOnly.posts().get(0);
    assertThat(post.content().path("status").asText()).isEqualTo("applied");
    assertThat(post.sender()).isEqualTo(guest.address().toString());
    assertThat(new MessageVerifier().verify(post.toMessage()).sender())
        .isEqualTo(guest.address());

    final PostPage page2 = store.posts(PostQuery.builder().pagination(2).page(2).oldestFirst()
        .build());
    assertThat(page2.total()).isEqualTo(5);
    assertThat(page2.posts()).extracting(PostRecord::itemHash)
        .containsExactly(otherRef.itemHash(), otherChannel.itemHash());
    assertThat(store.posts(PostQuery.builder().addresses("not-an-address").build()).posts())
        .isEmpty();
  }

  @Test
  void forget_shouldRemoveTheSendersOwnMessages_andRefuseOthers() {
    final AlephMessage post = guest.post("t", null, JsonNodeFactory.instance.objectNode(), null);
    final AlephMessage aggregate = owner.aggregate(KEY, entry("t1", "pending"), null);
    store.publish(post);
    store.publish(aggregate);

    final RecordRejectedException forbidden = rejection(() -> store.publish(
        owner.forget(List.of(post.itemHash(), aggregate.itemHash()), List.of(), "mine", null)));
    assertThat(forbidden.httpStatus()).isEqualTo(403);
    assertThat(forbidden.code()).isEqualTo(ErrorCodes.FORBIDDEN);
    // Refused as a whole: the owner's own message named in it was not forgotten either.
    assertThat(store.aggregate(owner.address(), KEY)).isPresent();
    assertThat(store.posts(PostQuery.builder().build()).posts()).hasSize(1);

    store.publish(guest.forget(List.of(post.itemHash()), List.of(), "cleanup", null));
    assertThat(store.posts(PostQuery.builder().build()).posts()).isEmpty();
    final RecordRejectedException replay = rejection(() -> store.publish(post));
    assertThat(replay.httpStatus()).isEqualTo(410);
  }

  @Test
  void forget_shouldDropWholeAggregateKeys_andRefuseForgettingAForget() {
    store.publish(owner.aggregate(KEY, entry("t1", "pending"), null));
    store.publish(owner.aggregate(KEY, entry("t2", "pending"), null));
    store.publish(owner.aggregate("keep", entry("k", "x"), null));
    final AlephMessage forget = owner.forget(List.of(), List.of(KEY), "failed attempt", null);
    store.publish(forget);
    assertThat(store.aggregates(owner.address(), List.of())).containsOnlyKeys("keep");
    final RecordRejectedException e = rejection(() -> store.publish(
        owner.forget(List.of(forget.itemHash()), List.of(), null, null)));
    assertThat(e.code()).isEqualTo(ErrorCodes.INVALID_MESSAGE);
  }

  @Test
  void publish_shouldBeIdempotent_andRefuseBeyondTheLimit() {
    final LocalRecordStore small =
        new LocalRecordStore(new MemoryRecordStorage(), new MessageVerifier(), 2);
    final AlephMessage first = owner.aggregate(KEY, entry("a", "x"), null);
    small.publish(first);
    small.publish(first);
    assertThat(small.messageCount()).isEqualTo(1);
    small.publish(owner.aggregate(KEY, entry("b", "x"), null));
    final RecordRejectedException full = rejection(
        () -> small.publish(owner.aggregate(KEY, entry("c", "x"), null)));
    assertThat(full.httpStatus()).isEqualTo(507);
    assertThat(full.code()).isEqualTo(ErrorCodes.STORE_FULL);
  }

  @Test
  void publish_shouldStoreNothing_whenTheMessageIsInvalid() {
    final AlephMessage real = owner.aggregate(KEY, entry("a", "x"), null);
    final AlephMessage tampered = new AlephMessage(real.sender(), real.chain(), real.type(),
        real.itemType(), real.itemContent().replace("\"x\"", "\"y\""), real.itemHash(),
        real.time(), real.channel(), real.signature());
    assertThatThrownBy(() -> store.publish(tampered))
        .isInstanceOf(RecordRejectedException.class);
    assertThat(store.messageCount()).isZero();
    assertThat(store.aggregates(owner.address(), List.of())).isEqualTo(Map.of());
  }
}
