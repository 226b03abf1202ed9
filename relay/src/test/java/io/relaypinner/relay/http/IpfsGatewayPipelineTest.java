package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.gateway.GatewayMetrics;
import io.relaypinner.relay.gateway.IpfsGatewayRoute;
import io.relaypinner.relay.testing.RawHttpResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code /ipfs/} answers of spec 4.6 that a running node cannot be pushed into cleanly: a
 * full storage executor (503) and a failing pin check (500), on an {@link EmbeddedChannel}.
 */
class IpfsGatewayPipelineTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Executor INLINE = Runnable::run;
  private static final Executor FULL = task -> {
    throw new RejectedExecutionException("queue full");
  };

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final HttpResponses responses = new HttpResponses(HttpResponses.newObjectMapper());
  private final MemoryBlockstore blocks = new MemoryBlockstore();
  private final Cid file = new UnixFsImporter(blocks, UnixFsImporter.Options.HELIA)
      .importBytes("hello".getBytes(StandardCharsets.UTF_8));
  private EmbeddedChannel channel;

  @AfterEach
  void tearDown() {
    if (channel != null) {
      channel.finishAndReleaseAll();
    }
  }

  private RawHttpResponse get(final Datastore datastore, final Executor storage)
      throws IOException {
    final PinStore pins = new PinStore(datastore, blocks, CodecLinkResolver.standard());
    final Router router = Router.builder().getPrefix(IpfsGatewayRoute.PREFIX,
        new IpfsGatewayRoute(pins, new UnixFsReader(blocks), storage, responses,
            new GatewayMetrics(registry))).build();
    channel = new EmbeddedChannel(new HttpServerInitializer(RelayConfig.DEFAULT.http(),
        new CorsPolicy(RelayConfig.DEFAULT.cors()), router, responses,
        new HttpMetrics(registry)));
    channel.writeInbound(Unpooled.copiedBuffer(
        "GET /ipfs/" + file + " HTTP/1.1\r\nHost: a\r\n\r\n", StandardCharsets.ISO_8859_1));
    channel.runPendingTasks();
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (ByteBuf buf = channel.readOutbound(); buf != null; buf = channel.readOutbound()) {
      final byte[] bytes = new byte[buf.readableBytes()];
      buf.readBytes(bytes);
      buf.release();
      out.writeBytes(bytes);
    }
    return RawHttpResponse.read(new ByteArrayInputStream(out.toByteArray()), false);
  }

  private static void assertError(final RawHttpResponse response, final int status,
      final String code) throws IOException {
    assertThat(response.status()).isEqualTo(status);
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("ok").asBoolean(true)).isFalse();
    assertThat(body.get("code").asText()).isEqualTo(code);
    assertThat(body.get("error").isTextual()).isTrue();
    assertThat(response.header("access-control-allow-origin")).isEqualTo("*");
  }

  @Test
  void get_shouldAnswer503_whenTheStorageExecutorIsFull() throws IOException {
    assertError(get(new MemoryDatastore(), FULL), 503, ErrorCodes.IPFS_UNAVAILABLE);
  }

  @Test
  void get_shouldAnswer500_whenThePinCheckFails() throws IOException {
    final Datastore failing = new Datastore() {
      @Override
      public Optional<byte[]> get(final String key) {
        throw new IllegalStateException("datastore closed");
      }

      @Override
      public void put(final String key, final byte[] value) {
        throw new IllegalStateException("datastore closed");
      }

      @Override
      public boolean delete(final String key) {
        throw new IllegalStateException("datastore closed");
      }

      @Override
      public List<Entry> scan(final String prefix) {
        throw new IllegalStateException("datastore closed");
      }

      @Override
      public void close() {
        // Nothing is open.
      }
    };

    assertError(get(failing, INLINE), 500, ErrorCodes.INTERNAL_ERROR);
  }

  @Test
  void get_shouldAnswer404_whenNotPinned() throws IOException {
    assertError(get(new MemoryDatastore(), INLINE), 404, ErrorCodes.CONTENT_NOT_FOUND);
  }

}
