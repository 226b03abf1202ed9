package io.relaypinner.relay.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code RELAY_BLOCKSTORE} / {@code RELAY_DATASTORE} and their settings. */
class StoreSettingsTest {
  private static InvalidConfigException rejected(final Map<String, String> env) {
    try {
      RelayConfig.fromEnvironment(env);
    } catch (final InvalidConfigException e) {
      return e;
    }
    throw new AssertionError("accepted " + env);
  }

  private static Map<String, String> env(final String... pairs) {
    final Map<String, String> env = new java.util.HashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      env.put(pairs[i], pairs[i + 1]);
    }
    return env;
  }

  @Test
  void defaultsAreTheEmbeddedStores() {
    final StorageConfig storage = RelayConfig.fromEnvironment(Map.of()).storage();
    assertThat(storage.s3()).isEmpty();
    assertThat(storage.postgres()).isEmpty();
    assertThat(storage.shared()).isFalse();
    // Settings of a kind not chosen are ignored.
    assertThat(RelayConfig.fromEnvironment(Map.of("RELAY_S3_BUCKET", "x", "RELAY_POSTGRES_URL",
        "nonsense")).storage().shared()).isFalse();
  }

  @Test
  void readsTheSharedStores() {
    final StorageConfig storage = RelayConfig.fromEnvironment(env(
        "RELAY_BLOCKSTORE", "S3", "RELAY_S3_ENDPOINT", "http://127.0.0.1:9000",
        "RELAY_S3_BUCKET", "relay-blocks", "RELAY_S3_REGION", "eu-central-1",
        "RELAY_S3_PREFIX", "blocks", "AWS_ACCESS_KEY_ID", "id", "AWS_SECRET_ACCESS_KEY", "key",
        "RELAY_DATASTORE", "postgres",
        "RELAY_POSTGRES_URL", "jdbc:postgresql://db:5432/relay?sslmode=require",
        "RELAY_POSTGRES_USER", "relay", "RELAY_POSTGRES_PASSWORD", "secret")).storage();
    assertThat(storage.shared()).isTrue();
    final var s3 = storage.s3().orElseThrow();
    assertThat(s3.endpoint()).contains(URI.create("http://127.0.0.1:9000"));
    assertThat(s3.bucket()).isEqualTo("relay-blocks");
    assertThat(s3.region()).isEqualTo("eu-central-1");
    assertThat(s3.prefix()).isEqualTo("blocks/");
    assertThat(s3.accessKeyId()).contains("id");
    assertThat(s3.toString()).doesNotContain("key]").doesNotContain("=key");
    final var pg = storage.postgres().orElseThrow();
    assertThat(pg.user()).contains("relay");
    assertThat(pg.password()).contains("secret");
    assertThat(pg.safeUrl()).isEqualTo("jdbc:postgresql://db:5432/relay");
    assertThat(pg.toString()).doesNotContain("secret");
    assertThat(RelayConfig.fromEnvironment(Map.of("RELAY_BLOCKSTORE", "s3",
        "RELAY_S3_BUCKET", "b12")).storage().s3().orElseThrow().endpoint())
        .isEqualTo(Optional.empty());
  }

  @Test
  void badSettingsNameTheirVariable() {
    assertThat(rejected(Map.of("RELAY_BLOCKSTORE", "ipfs")).variable())
        .isEqualTo("RELAY_BLOCKSTORE");
    assertThat(rejected(Map.of("RELAY_DATASTORE", "mysql")).variable())
        .isEqualTo("RELAY_DATASTORE");
    assertThat(rejected(Map.of("RELAY_BLOCKSTORE", "s3")).variable())
        .isEqualTo("RELAY_S3_BUCKET");
    assertThat(rejected(Map.of("RELAY_BLOCKSTORE", "s3", "RELAY_S3_BUCKET", "b",
        "RELAY_S3_ENDPOINT", "ftp://x")).variable()).isEqualTo("RELAY_S3_BUCKET");
    assertThat(rejected(Map.of("RELAY_BLOCKSTORE", "s3", "RELAY_S3_BUCKET", "bucket",
        "RELAY_S3_ENDPOINT", "ftp://x")).variable()).isEqualTo("RELAY_S3_ENDPOINT");
    assertThat(rejected(Map.of("RELAY_BLOCKSTORE", "s3", "RELAY_S3_BUCKET", "bucket",
        "RELAY_S3_PREFIX", "/abs")).variable()).isEqualTo("RELAY_S3_PREFIX");
    assertThat(rejected(Map.of("RELAY_BLOCKSTORE", "s3", "RELAY_S3_BUCKET", "bucket",
        "AWS_ACCESS_KEY_ID", "only-id")).getMessage()).contains("AWS_SECRET_ACCESS_KEY");
    assertThat(rejected(Map.of("RELAY_DATASTORE", "postgres")).variable())
        .isEqualTo("RELAY_POSTGRES_URL");
    final InvalidConfigException url = rejected(Map.of("RELAY_DATASTORE", "postgres",
        "RELAY_POSTGRES_URL", "postgres://u:pw@db/relay"));
    assertThat(url.variable()).isEqualTo("RELAY_POSTGRES_URL");
    assertThatThrownBy(() -> RelayConfig.fromEnvironment(Map.of("RELAY_DATASTORE", "postgres",
        "RELAY_POSTGRES_URL", "jdbc:postgresql://db/relay?password=pw x")))
        .hasMessageNotContaining("pw x");
  }
}
