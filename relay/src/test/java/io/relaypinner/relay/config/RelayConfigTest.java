package io.relaypinner.relay.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.common.budget.IpPrefix;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class RelayConfigTest {
  private static final String ZONE =
      "k51qzi5uqu5dgutdk6i1ynyzgkqngpha5xpgia3a5qqp4jsh0u4csozksxel3r.libp2p.direct";

  private static RelayConfig env(final String... keyValues) {
    final Map<String, String> env = new HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      env.put(keyValues[i], keyValues[i + 1]);
    }
    return RelayConfig.fromEnvironment(env);
  }

  private static InvalidConfigException rejected(final String... keyValues) {
    try {
      env(keyValues);
    } catch (final InvalidConfigException e) {
      return e;
    }
    throw new AssertionError("accepted " + List.of(keyValues));
  }

  @Nested
  class Defaults {
    @Test
    void fromEnvironment_shouldEqualDefault_whenEnvironmentIsEmpty() {
      assertThat(RelayConfig.fromEnvironment(Map.of())).isEqualTo(RelayConfig.DEFAULT);
    }

    @Test
    void fromEnvironment_shouldIgnoreUnknownVariables_whenProcessEnvironmentHasMany() {
      assertThat(env("PATH", "/usr/bin", "HOME", "/root", "METRICS_PORTS", "x"))
          .isEqualTo(RelayConfig.DEFAULT);
    }

    @Test
    void default_shouldMatchContract_forEveryVariable() {
      final RelayConfig c = RelayConfig.DEFAULT;
      assertThat(c.storage().dataDir()).isEqualTo(Path.of("./relay-data"));
      assertThat(c.identity().privateKeyHex()).isEmpty();
      assertThat(c.network().listenIpv4()).isEqualTo("0.0.0.0");
      assertThat(c.network().listenIpv6()).isEqualTo("::");
      assertThat(c.network().ipv6Disabled()).isFalse();
      assertThat(c.network().tcpPort()).isEqualTo(9091);
      assertThat(c.network().wsPort()).isEqualTo(9092);
      assertThat(c.network().bootstrapPeers()).isEmpty();
      assertThat(c.network().bootstrapDisabled()).isFalse();
      assertThat(c.network().announce()).isEmpty();
      assertThat(c.deployment().publicIpv4()).isEmpty();
      assertThat(c.deployment().publicIpv6()).isEmpty();
      assertThat(c.deployment().proxyHostname()).isEmpty();
      assertThat(List.of(c.deployment().externalTcpPort(), c.deployment().externalWsPort(),
          c.deployment().externalWebrtcPort(), c.deployment().externalQuicPort(),
          c.deployment().externalMetricsPort(), c.deployment().externalMetricsHttpsPort()))
          .allMatch(OptionalInt::isEmpty);
      assertThat(c.deployedMode()).isFalse();
      assertThat(c.http().host()).isEqualTo("0.0.0.0");
      assertThat(c.http().port()).isEqualTo(9090);
      assertThat(c.http().disabled()).isFalse();
      assertThat(c.http().apiToken()).isEmpty();
      assertThat(c.http().idleTimeout()).isEqualTo(Duration.ofSeconds(60));
      assertThat(c.http().maxInitialLineLength()).isEqualTo(8192);
      assertThat(c.http().maxHeaderSize()).isEqualTo(16384);
      assertThat(c.http().maxBodySize()).isEqualTo(65536);
      assertThat(c.https().enabled()).isFalse();
      assertThat(c.https().port()).isEqualTo(9443);
      assertThat(c.https().publicHost()).isEmpty();
      assertThat(c.cors().allowedOrigins()).containsExactly("*");
      assertThat(c.cors().anyOrigin()).isTrue();
      assertThat(c.cors().allowHeaders()).containsExactly("Content-Type", "Authorization");
      assertThat(c.cors().maxAgeSeconds()).isEqualTo(86_400);
      assertThat(c.tls().certDir()).isEqualTo(Path.of("./relay-data").resolve("tls"));
      assertThat(c.tls().autoTlsDomain()).isEqualTo("libp2p.direct");
      assertThat(c.tls().autoTlsDisabled()).isFalse();
      assertThat(c.sync().pinningSyncTimeout()).isEqualTo(Duration.ofMillis(30_000));
      assertThat(c.sync().syncCooldown()).isEqualTo(Duration.ofMillis(60_000));
      assertThat(c.sync().slots()).isEqualTo(2);
      assertThat(c.sync().mediaCidFields()).isEqualTo(SyncConfig.DEFAULT_MEDIA_CID_FIELDS);
      assertThat(c.gateway().mode()).isEqualTo(GatewayMode.PINNED_FIRST);
      assertThat(c.gateway().fallbackTimeout()).isEqualTo(Duration.ofMillis(60_000));
      assertThat(c.logging().level()).isEqualTo(LogLevel.INFO);
      assertThat(c.logging().format()).isEqualTo(LogFormat.TEXT);
    }

    @Test
    void fromEnvironment_shouldTreatEmptyValuesAsUnset_whenEveryVariableIsEmpty() {
      final Map<String, String> env = new HashMap<>();
      for (final String name : List.of("DATASTORE_PATH", "RELAY_DATASTORE_PATH", "RELAY_PRIV_KEY",
          "RELAY_LISTEN_IPV4", "RELAY_LISTEN_IPV6", "RELAY_DISABLE_IPV6", "RELAY_TCP_PORT",
          "RELAY_WS_PORT", "RELAY_QUIC_PORT", "RELAY_DISABLE_QUIC", "RELAY_BOOTSTRAP_PEERS",
          "RELAY_DISABLE_BOOTSTRAP", "RELAY_ANNOUNCE",
          "VITE_APPEND_ANNOUNCE", "PUBLIC_IPV4", "PUBLIC_IPV6", "PROXY_HOSTNAME",
          "EXTERNAL_RELAY_TCP_PORT", "EXTERNAL_RELAY_WS_PORT", "EXTERNAL_RELAY_WEBRTC_PORT",
          "EXTERNAL_RELAY_QUIC_PORT", "EXTERNAL_METRICS_PORT", "EXTERNAL_METRICS_HTTPS_PORT",
          "METRICS_HOST", "METRICS_PORT", "METRICS_DISABLED", "METRICS_HTTPS_ENABLED",
          "METRICS_HTTPS_PORT", "METRICS_HTTPS_PUBLIC_HOST", "METRICS_CORS_ORIGIN",
          "METRICS_CORS_ALLOW_HEADERS", "METRICS_CORS_MAX_AGE", "RELAY_TLS_CERT_DIR",
          "RELAY_AUTOTLS_DOMAIN", "disableAutoTLS", "RELAY_PINNING_SYNC_TIMEOUT_MS",
          "RELAY_ORBITDB_SYNC_COOLDOWN_MS", "RELAY_SYNC_SLOTS", "RELAY_API_TOKEN",
          "RELAY_IPFS_GATEWAY_MODE", "RELAY_IPFS_FALLBACK_TIMEOUT_MS", "RELAY_MEDIA_CID_FIELDS",
          "RELAY_ORBITDB_ALLOW", "RELAY_ORBITDB_DENY",
          "LOG_LEVEL", "LOG_FORMAT", "RELAY_MAX_CONNECTIONS", "RELAY_MAX_STREAMS_PER_CONNECTION",
          "RELAY_HANDSHAKE_TIMEOUT_MS", "RELAY_IDLE_TIMEOUT_MS",
          "RELAY_MAX_PEER_INBOUND_BYTES_PER_SEC", "RELAY_DHT_MODE", "RELAY_DISABLE_DHT")) {
        env.put(name, name.hashCode() % 2 == 0 ? "" : "   ");
      }
      assertThat(RelayConfig.fromEnvironment(env)).isEqualTo(RelayConfig.DEFAULT);
    }
  }

  @Nested
  class Booleans {
    static Stream<Arguments> spellings() {
      final List<String> variables = List.of("RELAY_DISABLE_IPV6", "RELAY_DISABLE_BOOTSTRAP",
          "METRICS_DISABLED", "METRICS_HTTPS_ENABLED", "disableAutoTLS");
      final List<String> truthy = List.of("true", "1", "yes", "on", "TRUE", "True", "YES", "On");
      final List<String> falsy = List.of("false", "0", "no", "off", "FALSE", "False", "NO", "oFF");
      final Stream.Builder<Arguments> out = Stream.builder();
      for (final String variable : variables) {
        truthy.forEach(v -> out.add(Arguments.of(variable, v, true)));
        falsy.forEach(v -> out.add(Arguments.of(variable, v, false)));
      }
      return out.build();
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("spellings")
    void fromEnvironment_shouldParseBoolean_whenAnySpellingInAnyCase(
        final String variable, final String value, final boolean expected) {
      final RelayConfig c = env(variable, value);
      final boolean actual = switch (variable) {
        case "RELAY_DISABLE_IPV6" -> c.network().ipv6Disabled();
        case "RELAY_DISABLE_BOOTSTRAP" -> c.network().bootstrapDisabled();
        case "METRICS_DISABLED" -> c.http().disabled();
        case "METRICS_HTTPS_ENABLED" -> c.https().enabled();
        case "disableAutoTLS" -> c.tls().autoTlsDisabled();
        default -> throw new AssertionError(variable);
      };
      assertThat(actual).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"maybe", "2", "enabled", "y", "n", "t", "-1", "truee"})
    void fromEnvironment_shouldRejectBooleanNamingVariable_whenValueIsNotABoolean(
        final String value) {
      assertThat(rejected("METRICS_DISABLED", value))
          .hasMessage("METRICS_DISABLED: \"" + value
              + "\" is not a boolean (true/false, 1/0, yes/no, on/off)")
          .extracting(InvalidConfigException::variable).isEqualTo("METRICS_DISABLED");
    }

    @Test
    void fromEnvironment_shouldTrimBoolean_whenValueHasSpaces() {
      assertThat(env("METRICS_DISABLED", " yes ").http().disabled()).isTrue();
    }
  }

  @Nested
  class Ports {
    @Test
    void fromEnvironment_shouldAcceptPortRange_whenZeroToMax() {
      assertThat(env("METRICS_PORT", "0").http().port()).isZero();
      assertThat(env("METRICS_PORT", "65535").http().port()).isEqualTo(65_535);
      assertThat(env("RELAY_TCP_PORT", "4001", "RELAY_WS_PORT", "0", "METRICS_HTTPS_PORT", "8443")
          .network().tcpPort()).isEqualTo(4001);
      assertThat(env("RELAY_QUIC_PORT", "0").network().quicPort()).isZero();
      assertThat(env("RELAY_QUIC_PORT", "4001").network().quicPort()).isEqualTo(4001);
    }

    @Test
    void fromEnvironment_shouldListenOnQuic9094_unlessDisabled() {
      assertThat(RelayConfig.DEFAULT.network().quicPort()).isEqualTo(9094);
      assertThat(RelayConfig.DEFAULT.network().quicDisabled()).isFalse();
      assertThat(env("RELAY_DISABLE_QUIC", "true").network().quicDisabled()).isTrue();
      assertThat(rejected("RELAY_DISABLE_QUIC", "maybe").variable())
          .isEqualTo("RELAY_DISABLE_QUIC");
      final RelayConfig set = env("RELAY_QUIC_PORT", "4005", "RELAY_DISABLE_QUIC", "1");
      assertThat(set.toBuilder().build()).isEqualTo(set);
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "65536", "-1", "80a", "1e3", "0x50", "99999999999999999999",
        "9090.0", "+80"})
    void fromEnvironment_shouldRejectPort_whenNotAnIntegerInRange(final String value) {
      assertThat(rejected("METRICS_PORT", value))
          .hasMessage("METRICS_PORT: \"" + value + "\" is not a port (0-65535)");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "RELAY_TCP_PORT", "RELAY_WS_PORT", "RELAY_QUIC_PORT", "METRICS_PORT",
        "METRICS_HTTPS_PORT"})
    void fromEnvironment_shouldNameTheVariable_whenAnyListenPortIsBad(final String variable) {
      assertThat(rejected(variable, "70000").variable()).isEqualTo(variable);
    }

    @ParameterizedTest
    @ValueSource(strings = {"EXTERNAL_RELAY_TCP_PORT", "EXTERNAL_RELAY_WS_PORT",
        "EXTERNAL_RELAY_WEBRTC_PORT", "EXTERNAL_RELAY_QUIC_PORT", "EXTERNAL_METRICS_PORT",
        "EXTERNAL_METRICS_HTTPS_PORT"})
    void fromEnvironment_shouldRejectZero_whenPortIsExternal(final String variable) {
      assertThat(rejected(variable, "0"))
          .hasMessage(variable + ": \"0\" is not a port (1-65535)");
      assertThat(env(variable, "29090").deployedMode()).isTrue();
    }

    @Test
    void build_shouldRejectPortNamingVariable_whenSetProgrammatically() {
      assertThatThrownBy(() -> RelayConfig.builder().metricsPort(70_000).build())
          .isInstanceOf(InvalidConfigException.class)
          .hasMessage("METRICS_PORT: \"70000\" is not a port (0-65535)");
    }
  }

  @Nested
  class Durations {
    @Test
    void fromEnvironment_shouldParseMilliseconds_whenIntegers() {
      final RelayConfig c = env("RELAY_PINNING_SYNC_TIMEOUT_MS", "5000",
          "RELAY_ORBITDB_SYNC_COOLDOWN_MS", "0", "RELAY_IPFS_FALLBACK_TIMEOUT_MS", "1500");
      assertThat(c.sync().pinningSyncTimeout()).isEqualTo(Duration.ofSeconds(5));
      assertThat(c.sync().syncCooldown()).isZero();
      assertThat(c.gateway().fallbackTimeout()).isEqualTo(Duration.ofMillis(1500));
    }

    @ParameterizedTest
    @ValueSource(strings = {"5s", "-1", "1.5", "abc", "3600001", "0"})
    void fromEnvironment_shouldRejectSyncTimeout_whenNotPositiveMillisecondsWithinAnHour(
        final String value) {
      assertThat(rejected("RELAY_PINNING_SYNC_TIMEOUT_MS", value))
          .hasMessage("RELAY_PINNING_SYNC_TIMEOUT_MS: \"" + value
              + "\" is not a duration in milliseconds (an integer in 1-3600000)");
    }

    @Test
    void fromEnvironment_shouldRejectCooldownAndFallback_whenOutOfBounds() {
      assertThat(rejected("RELAY_ORBITDB_SYNC_COOLDOWN_MS", "86400001").variable())
          .isEqualTo("RELAY_ORBITDB_SYNC_COOLDOWN_MS");
      assertThat(rejected("RELAY_IPFS_FALLBACK_TIMEOUT_MS", "0").variable())
          .isEqualTo("RELAY_IPFS_FALLBACK_TIMEOUT_MS");
    }

    @Test
    void fromEnvironment_shouldParseSlots_whenWithinBounds() {
      assertThat(env("RELAY_SYNC_SLOTS", "4").sync().slots()).isEqualTo(4);
      assertThat(rejected("RELAY_SYNC_SLOTS", "0"))
          .hasMessage("RELAY_SYNC_SLOTS: \"0\" is not an integer in 1-64");
      assertThat(rejected("RELAY_SYNC_SLOTS", "two").variable()).isEqualTo("RELAY_SYNC_SLOTS");
    }

    @Test
    void fromEnvironment_shouldParseTheImportStagingCap_defaultingToSlotsTimesTheCarLimit() {
      assertThat(RelayConfig.DEFAULT.imports().stagingBytes()).isEqualTo(256L << 20);
      assertThat(env("RELAY_IMPORT_SLOTS", "3").imports().stagingBytes())
          .isEqualTo(3 * ImportConfig.MAX_IMPORT_BYTES);
      assertThat(env("RELAY_IMPORT_STAGING_MAX_BYTES", "1048576").imports().stagingBytes())
          .isEqualTo(1L << 20);
      assertThat(RelayConfig.builder().importStagingMaxBytes(5L << 20).build().toBuilder()
          .build().imports().stagingBytes()).isEqualTo(5L << 20);
      assertThat(rejected("RELAY_IMPORT_STAGING_MAX_BYTES", "1000").variable())
          .isEqualTo("RELAY_IMPORT_STAGING_MAX_BYTES");
      assertThat(rejected("RELAY_IMPORT_STAGING_MAX_BYTES", "lots").variable())
          .isEqualTo("RELAY_IMPORT_STAGING_MAX_BYTES");
    }

    @Test
    void fromEnvironment_shouldParseTheCircuitsPerIpCap_defaulting32() {
      assertThat(RelayConfig.DEFAULT.circuit().relay().maxCircuitsPerIp()).isEqualTo(32);
      assertThat(env("RELAY_MAX_CIRCUITS_PER_IP", "8").circuit().relay().maxCircuitsPerIp())
          .isEqualTo(8);
      assertThat(rejected("RELAY_MAX_CIRCUITS_PER_IP", "0").variable())
          .isEqualTo("RELAY_MAX_CIRCUITS_PER_IP");
    }

    @Test
    void fromEnvironment_shouldParseCorsMaxAge_whenSeconds() {
      assertThat(env("METRICS_CORS_MAX_AGE", "600").cors().maxAgeSeconds()).isEqualTo(600);
      assertThat(rejected("METRICS_CORS_MAX_AGE", "-5").variable())
          .isEqualTo("METRICS_CORS_MAX_AGE");
    }
  }

  @Nested
  class Lists {
    @Test
    void fromEnvironment_shouldSplitTrimAndDropEmptyItems_whenCommaSeparated() {
      final RelayConfig c = env("RELAY_BOOTSTRAP_PEERS",
          " /ip4/1.2.3.4/tcp/4001/p2p/12D3KooWA , ,/dns4/a.example/tcp/443/wss,,");
      assertThat(c.network().bootstrapPeers())
          .containsExactly("/ip4/1.2.3.4/tcp/4001/p2p/12D3KooWA", "/dns4/a.example/tcp/443/wss");
      assertThat(c.network().effectiveBootstrapPeers()).hasSize(2);
    }

    @Test
    void effectiveBootstrapPeers_shouldBeEmpty_whenBootstrapDisabled() {
      final RelayConfig c = env("RELAY_BOOTSTRAP_PEERS", "/ip4/1.2.3.4/tcp/4001",
          "RELAY_DISABLE_BOOTSTRAP", "on");
      assertThat(c.network().bootstrapPeers()).hasSize(1);
      assertThat(c.network().effectiveBootstrapPeers()).isEmpty();
    }

    @Test
    void fromEnvironment_shouldRejectItemNamingVariable_whenNotAMultiaddr() {
      assertThat(rejected("RELAY_ANNOUNCE", "/ip4/1.2.3.4/tcp/1,1.2.3.4:9091"))
          .hasMessageStartingWith("RELAY_ANNOUNCE: \"1.2.3.4:9091\" is not a multiaddr");
      assertThat(rejected("VITE_APPEND_ANNOUNCE", "nope").variable())
          .isEqualTo("VITE_APPEND_ANNOUNCE");
    }

    @Test
    void fromEnvironment_shouldUseDefault_whenListHasOnlyEmptyItems() {
      assertThat(env("METRICS_CORS_ORIGIN", " , ,").cors().anyOrigin()).isTrue();
    }

    @Test
    void fromEnvironment_shouldParseCorsSettings_whenAllowlistGiven() {
      final RelayConfig c = env("METRICS_CORS_ORIGIN", "https://app.example, http://localhost:5173",
          "METRICS_CORS_ALLOW_HEADERS", "content-type,x-requested-with");
      assertThat(c.cors().anyOrigin()).isFalse();
      assertThat(c.cors().allowedOrigins())
          .containsExactly("https://app.example", "http://localhost:5173");
      assertThat(c.cors().allowHeaders()).containsExactly("content-type", "x-requested-with");
    }

    @Test
    void fromEnvironment_shouldRejectOrigin_whenItHasAPathOrNoScheme() {
      assertThat(rejected("METRICS_CORS_ORIGIN", "https://app.example/"))
          .hasMessageStartingWith("METRICS_CORS_ORIGIN: \"https://app.example/\" is not an origin");
      assertThat(rejected("METRICS_CORS_ORIGIN", "app.example").variable())
          .isEqualTo("METRICS_CORS_ORIGIN");
      assertThat(rejected("METRICS_CORS_ALLOW_HEADERS", "Content Type").variable())
          .isEqualTo("METRICS_CORS_ALLOW_HEADERS");
    }

    @Test
    void fromEnvironment_shouldAllowAnyOrigin_whenStarIsListed() {
      assertThat(env("METRICS_CORS_ORIGIN", "https://a.example,*").cors().anyOrigin()).isTrue();
    }

    @Test
    void fromEnvironment_shouldReplaceOrExtendMediaFields_whenSet() {
      assertThat(env("RELAY_MEDIA_CID_FIELDS", "coverCid, avatar.cid").sync().mediaCidFields())
          .containsExactly("coverCid", "avatar.cid");
      assertThat(env("RELAY_MEDIA_CID_FIELDS", "default,coverCid").sync().mediaCidFields())
          .startsWith(SyncConfig.DEFAULT_MEDIA_CID_FIELDS.toArray(String[]::new))
          .endsWith("coverCid")
          .hasSize(SyncConfig.DEFAULT_MEDIA_CID_FIELDS.size() + 1);
      assertThat(rejected("RELAY_MEDIA_CID_FIELDS", "a b").variable())
          .isEqualTo("RELAY_MEDIA_CID_FIELDS");
    }

    @Test
    void fromEnvironment_shouldReadTheDatabaseAllowAndDenyLists() {
      final String db = "/orbitdb/zdpuAkstgbTVGHQmMi5TC84auhJ8rL5qoaNEtXo2d5PHXs2To";
      final io.relaypinner.multiformats.Cid otherManifest =
          io.relaypinner.ipfs.dagcbor.DagCbor.cid(new byte[] {1});
      final String other = new io.relaypinner.orbitdb.OrbitDbAddress(otherManifest).toString();
      assertThat(env("RELAY_ORBITDB_DENY", db).sync().topicPolicy().permits(db)).isFalse();
      assertThat(env("RELAY_ORBITDB_DENY", db).sync().topicPolicy().permits(other)).isTrue();
      final var allowBare = env("RELAY_ORBITDB_ALLOW", db.substring("/orbitdb/".length()))
          .sync().topicPolicy();
      assertThat(allowBare.permits(db)).isTrue();
      assertThat(allowBare.permits(other)).isFalse();
      // A bare manifest CID may be in any base; an address only in the one form.
      final var allowBase32 = env("RELAY_ORBITDB_ALLOW", otherManifest.toString())
          .sync().topicPolicy();
      assertThat(allowBase32.permits(other)).isTrue();
      assertThat(allowBase32.permits(db)).isFalse();
      assertThat(allowBase32.permits("/orbitdb/" + otherManifest)).isFalse();
      assertThat(rejected("RELAY_ORBITDB_ALLOW", "/orbitdb/nope").variable())
          .isEqualTo("RELAY_ORBITDB_ALLOW");
      assertThat(rejected("RELAY_ORBITDB_ALLOW", "/orbitdb/" + otherManifest).variable())
          .isEqualTo("RELAY_ORBITDB_ALLOW");
      // A raw CID is no manifest.
      assertThat(rejected("RELAY_ORBITDB_DENY", io.relaypinner.multiformats.Cid.v1(
          io.relaypinner.multiformats.Multicodec.RAW, otherManifest.multihash()).toString())
          .variable()).isEqualTo("RELAY_ORBITDB_DENY");
      assertThat(rejected("RELAY_ORBITDB_DENY", "x y").variable())
          .isEqualTo("RELAY_ORBITDB_DENY");
    }
  }

  @Nested
  class Aliases {
    @Test
    void fromEnvironment_shouldUseAlias_whenOnlyAliasIsSet() {
      assertThat(env("RELAY_DATASTORE_PATH", "/var/lib/relay").storage().dataDir())
          .isEqualTo(Path.of("/var/lib/relay"));
      assertThat(env("VITE_APPEND_ANNOUNCE", "/ip4/203.0.113.8/tcp/29091").network().announce())
          .containsExactly("/ip4/203.0.113.8/tcp/29091");
    }

    @Test
    void fromEnvironment_shouldPreferPrimaryName_whenBothAreSet() {
      assertThat(env("DATASTORE_PATH", "/a", "RELAY_DATASTORE_PATH", "/b").storage().dataDir())
          .isEqualTo(Path.of("/a"));
      assertThat(env("RELAY_ANNOUNCE", "/ip4/1.1.1.1/tcp/1", "VITE_APPEND_ANNOUNCE",
          "/ip4/2.2.2.2/tcp/2").network().announce()).containsExactly("/ip4/1.1.1.1/tcp/1");
    }

    @Test
    void fromEnvironment_shouldUseAlias_whenPrimaryIsEmpty() {
      assertThat(env("DATASTORE_PATH", "", "RELAY_DATASTORE_PATH", "/b").storage().dataDir())
          .isEqualTo(Path.of("/b"));
    }

    @Test
    void fromEnvironment_shouldPutTlsDirUnderDataDir_whenCertDirUnset() {
      assertThat(env("DATASTORE_PATH", "/data").tls().certDir()).isEqualTo(Path.of("/data/tls"));
      assertThat(env("DATASTORE_PATH", "/data", "RELAY_TLS_CERT_DIR", "/etc/relay/tls")
          .tls().certDir()).isEqualTo(Path.of("/etc/relay/tls"));
    }
  }

  @Nested
  class Deployment {
    @ParameterizedTest
    @ValueSource(strings = {"PROXY_HOSTNAME=relay.example.com", "PUBLIC_IPV4=203.0.113.8",
        "EXTERNAL_RELAY_TCP_PORT=29091", "EXTERNAL_RELAY_WS_PORT=29092",
        "EXTERNAL_RELAY_WEBRTC_PORT=29093", "EXTERNAL_RELAY_QUIC_PORT=29094",
        "EXTERNAL_METRICS_PORT=29090", "EXTERNAL_METRICS_HTTPS_PORT=29443"})
    void deployedMode_shouldBeTrue_whenAnyDeploymentFactIsSet(final String assignment) {
      final String[] kv = assignment.split("=", 2);
      assertThat(env(kv[0], kv[1]).deployedMode()).isTrue();
    }

    @Test
    void deployedMode_shouldBeFalse_whenOnlyPublicIpv6IsSet() {
      final RelayConfig c = env("PUBLIC_IPV6", "2001:db8::8");
      assertThat(c.deployment().publicIpv6()).contains("2001:db8::8");
      assertThat(c.deployedMode()).isFalse();
    }

    @Test
    void fromEnvironment_shouldRejectAddresses_whenNotLiteralsOfTheirFamily() {
      assertThat(rejected("PUBLIC_IPV4", "2001:db8::8"))
          .hasMessage("PUBLIC_IPV4: \"2001:db8::8\" is not an IPv4 address");
      assertThat(rejected("PUBLIC_IPV4", "203.0.113.256").variable()).isEqualTo("PUBLIC_IPV4");
      assertThat(rejected("PUBLIC_IPV6", "203.0.113.8").variable()).isEqualTo("PUBLIC_IPV6");
      assertThat(rejected("RELAY_LISTEN_IPV4", "localhost").variable())
          .isEqualTo("RELAY_LISTEN_IPV4");
      assertThat(rejected("RELAY_LISTEN_IPV6", "[::]").variable()).isEqualTo("RELAY_LISTEN_IPV6");
      assertThat(rejected("METRICS_HOST", "http://0.0.0.0").variable()).isEqualTo("METRICS_HOST");
      assertThat(env("METRICS_HOST", "localhost").http().host()).isEqualTo("localhost");
      assertThat(env("METRICS_HOST", "::1").http().host()).isEqualTo("::1");
    }

    @Test
    void fromEnvironment_shouldRejectProxyHostname_whenItIsAUrl() {
      assertThat(rejected("PROXY_HOSTNAME", "https://relay.example.com").variable())
          .isEqualTo("PROXY_HOSTNAME");
      assertThat(env("PROXY_HOSTNAME", "Dragon-Belt.2n6.me").deployment().proxyHostname())
          .contains("dragon-belt.2n6.me");
    }
  }

  @Nested
  class MetricsHttpsHost {
    @Test
    void resolve_shouldUsePublicHost_whenItIsOneLabelUnderTheZone() {
      final RelayConfig c = env("METRICS_HTTPS_PUBLIC_HOST", "203-0-113-8." + ZONE.toUpperCase(),
          "METRICS_HTTPS_PORT", "8443");
      final MetricsHttpsEndpoint e = MetricsHttpsEndpoint.resolve(c, ZONE);
      assertThat(e.host()).isEqualTo("203-0-113-8." + ZONE);
      assertThat(e.externalPort(e.configuredPort())).isEqualTo(8443);
      assertThat(e.healthUrl(8443)).isEqualTo("https://203-0-113-8." + ZONE + ":8443/health");
    }

    @ParameterizedTest
    @ValueSource(strings = {"relay.example.com", "a.b.", "a.b.libp2p.direct", "libp2p.direct"})
    void resolve_shouldRejectPublicHostNamingVariable_whenNotOneLabelUnderTheZone(
        final String host) {
      final String value = host.endsWith(".") ? host + ZONE : host;
      final RelayConfig c = env("METRICS_HTTPS_PUBLIC_HOST", value);
      assertThatThrownBy(() -> MetricsHttpsEndpoint.resolve(c, ZONE))
          .isInstanceOf(InvalidConfigException.class)
          .hasMessageStartingWith("METRICS_HTTPS_PUBLIC_HOST: \"" + value + "\" is not one DNS"
              + " label under the serving zone " + ZONE)
          .extracting(ex -> ((InvalidConfigException) ex).variable())
          .isEqualTo("METRICS_HTTPS_PUBLIC_HOST");
    }

    @Test
    void resolve_shouldRejectTheZoneItself_whenUsedAsPublicHost() {
      final RelayConfig c = env("METRICS_HTTPS_PUBLIC_HOST", ZONE);
      assertThatThrownBy(() -> MetricsHttpsEndpoint.resolve(c, ZONE))
          .isInstanceOf(InvalidConfigException.class);
    }

    @Test
    void resolve_shouldDeriveHostFromPublicIpv4_whenNoPublicHost() {
      final RelayConfig c = env("PUBLIC_IPV4", "203.0.113.8", "EXTERNAL_METRICS_HTTPS_PORT",
          "29443");
      final MetricsHttpsEndpoint e = MetricsHttpsEndpoint.resolve(c, ZONE);
      assertThat(e.host()).isEqualTo("203-0-113-8." + ZONE);
      assertThat(e.configuredPort()).isEqualTo(9443);
      assertThat(e.externalPort(9443)).isEqualTo(29443);
    }

    @Test
    void resolve_shouldUseLoopbackLabel_whenNothingIsSet() {
      assertThat(MetricsHttpsEndpoint.resolve(RelayConfig.DEFAULT, ZONE).host())
          .isEqualTo("127-0-0-1." + ZONE);
    }
  }

  @Nested
  class Enums {
    @Test
    void fromEnvironment_shouldParseGatewayMode_inAnyCase() {
      assertThat(env("RELAY_IPFS_GATEWAY_MODE", "pinned-only").gateway().mode())
          .isEqualTo(GatewayMode.PINNED_ONLY);
      assertThat(env("RELAY_IPFS_GATEWAY_MODE", "Pinned-First").gateway().mode())
          .isEqualTo(GatewayMode.PINNED_FIRST);
      assertThat(rejected("RELAY_IPFS_GATEWAY_MODE", "network"))
          .hasMessage("RELAY_IPFS_GATEWAY_MODE: \"network\" is not pinned-first or pinned-only");
    }

    @Test
    void fromEnvironment_shouldParseLogLevelAndFormat_inAnyCase() {
      final RelayConfig c = env("LOG_LEVEL", "DEBUG", "LOG_FORMAT", "Json");
      assertThat(c.logging().level()).isEqualTo(LogLevel.DEBUG);
      assertThat(c.logging().format()).isEqualTo(LogFormat.JSON);
      for (final String level : List.of("trace", "debug", "info", "warn", "error")) {
        assertThat(env("LOG_LEVEL", level).logging().level().value()).isEqualTo(level);
      }
      assertThat(rejected("LOG_LEVEL", "warning"))
          .hasMessage("LOG_LEVEL: \"warning\" is not trace, debug, info, warn or error");
      assertThat(rejected("LOG_FORMAT", "xml"))
          .hasMessage("LOG_FORMAT: \"xml\" is not text or json");
    }
  }

  @Nested
  class Secrets {
    private static final String KEY = "08011240" + "AB".repeat(32);

    @Test
    void fromEnvironment_shouldKeepPrivateKeyAsLowerHex_whenHex() {
      final RelayConfig c = env("RELAY_PRIV_KEY", KEY);
      assertThat(c.identity().privateKeyHex()).contains(KEY.toLowerCase());
      assertThat(c.identity().privateKeyBytes()).get()
          .satisfies(b -> assertThat(b).hasSize(36).startsWith(0x08, 0x01, 0x12, 0x40));
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "0x0801", "zz01", "08 01"})
    void fromEnvironment_shouldRejectPrivateKeyWithoutEchoingIt_whenNotHex(final String value) {
      final InvalidConfigException e = rejected("RELAY_PRIV_KEY", value);
      assertThat(e.variable()).isEqualTo("RELAY_PRIV_KEY");
      assertThat(e.getMessage()).startsWith("RELAY_PRIV_KEY: ").doesNotContain(value);
    }

    @Test
    void fromEnvironment_shouldRejectApiTokenWithoutEchoingIt_whenItHasSpaces() {
      final InvalidConfigException e = rejected("RELAY_API_TOKEN", "hunter2 token");
      assertThat(e.variable()).isEqualTo("RELAY_API_TOKEN");
      assertThat(e.getMessage()).doesNotContain("hunter2");
    }

    @Test
    void toString_shouldNotContainSecrets_whenKeyAndTokenAreSet() {
      final RelayConfig c = env("RELAY_PRIV_KEY", KEY, "RELAY_API_TOKEN", "s3cr3t-token");
      assertThat(c.http().apiToken()).contains("s3cr3t-token");
      assertThat(c.toString()).doesNotContain("s3cr3t").doesNotContainIgnoringCase(KEY)
          .contains("(set)");
    }
  }

  @Nested
  class BuilderRoundTrip {
    @Test
    void toBuilder_shouldRebuildAnEqualConfig_whenEverythingIsSet() {
      final RelayConfig c = env("DATASTORE_PATH", "/d", "RELAY_PRIV_KEY", "0801", "RELAY_TCP_PORT",
          "1", "RELAY_WS_PORT", "2", "RELAY_ANNOUNCE", "/ip4/1.2.3.4/tcp/1", "PUBLIC_IPV4",
          "1.2.3.4", "PUBLIC_IPV6", "::1", "PROXY_HOSTNAME", "p.example", "EXTERNAL_METRICS_PORT",
          "3", "METRICS_PORT", "4", "RELAY_API_TOKEN", "t", "METRICS_HTTPS_ENABLED", "1",
          "METRICS_HTTPS_PUBLIC_HOST", "x.example", "METRICS_CORS_ORIGIN", "https://a.example",
          "RELAY_SYNC_SLOTS", "3", "RELAY_IPFS_GATEWAY_MODE", "pinned-only", "LOG_FORMAT", "json");
      assertThat(c.toBuilder().build()).isEqualTo(c);
      assertThat(c.toBuilder().metricsPort(5).build().http().port()).isEqualTo(5);
    }

    @Test
    void builder_shouldResetToDefault_whenNullIsPassed() {
      final RelayConfig c = RelayConfig.builder().metricsHost("127.0.0.1").metricsHost(null)
          .corsOrigins(null).mediaCidFields(null).build();
      assertThat(c).isEqualTo(RelayConfig.DEFAULT);
      assertThat(RelayConfig.builder().publicIpv4("203.0.113.8").build().deployment()
          .publicIpv4()).isEqualTo(Optional.of("203.0.113.8"));
    }
  }

  @Nested
  class ConnectionLimitVariables {
    @Test
    void fromEnvironment_shouldReadEveryLimit_intoTheLibp2pLimits() {
      final RelayConfig c = env("RELAY_MAX_CONNECTIONS", "50",
          "RELAY_MAX_STREAMS_PER_CONNECTION", "64", "RELAY_HANDSHAKE_TIMEOUT_MS", "2500",
          "RELAY_IDLE_TIMEOUT_MS", "0", "RELAY_MAX_PEER_INBOUND_BYTES_PER_SEC", "1048576");
      final var limits = c.network().connectionLimits();
      assertThat(limits.maxConnections()).isEqualTo(50);
      assertThat(limits.maxStreamsPerConnection()).isEqualTo(64);
      assertThat(limits.handshakeTimeout()).isEqualTo(Duration.ofMillis(2500));
      assertThat(limits.idleTimeout()).isZero();
      assertThat(limits.peerInboundBytesPerSecond()).isEqualTo(1 << 20);
      assertThat(limits.peerInboundBurstBytes()).isEqualTo(2 << 20);
      assertThat(c.toBuilder().build()).isEqualTo(c);
    }

    @Test
    void defaults_shouldBeTheLibp2pDefaults() {
      assertThat(RelayConfig.DEFAULT.network().connectionLimits())
          .isEqualTo(io.relaypinner.libp2p.host.ConnectionLimits.DEFAULT);
    }

    @ParameterizedTest
    @ValueSource(strings = {"RELAY_MAX_CONNECTIONS=0", "RELAY_MAX_CONNECTIONS=abc",
        "RELAY_MAX_STREAMS_PER_CONNECTION=0", "RELAY_MAX_STREAMS_PER_CONNECTION=100001",
        "RELAY_HANDSHAKE_TIMEOUT_MS=99", "RELAY_HANDSHAKE_TIMEOUT_MS=10s",
        "RELAY_IDLE_TIMEOUT_MS=-1", "RELAY_IDLE_TIMEOUT_MS=86400001",
        "RELAY_MAX_PEER_INBOUND_BYTES_PER_SEC=-5",
        "RELAY_MAX_PEER_INBOUND_BYTES_PER_SEC=10737418241"})
    void fromEnvironment_shouldRejectALimitNamingItsVariable_whenOutOfRange(
        final String assignment) {
      final String[] parts = assignment.split("=", 2);
      assertThat(rejected(parts[0], parts[1]).variable()).isEqualTo(parts[0]);
    }
  }
  @Nested
  class BudgetVariables {
    @Test
    void fromEnvironment_shouldReadTheBudgetsConnectionLimits_prefixes_andTrustedProxies() {
      final RelayConfig c = env("RELAY_MAX_CONNECTIONS_PER_IP", "8",
          "RELAY_HTTP_MAX_CONNECTIONS", "100", "RELAY_IPV4_PREFIX_LENGTH", "24",
          "RELAY_IPV6_PREFIX_LENGTH", "56", "RELAY_TRUSTED_PROXIES", "10.0.0.0/8, ::1");
      assertThat(c.budget().maxConnectionsPerIp()).isEqualTo(8);
      assertThat(c.budget().httpMaxConnections()).isEqualTo(100);
      assertThat(c.budget().prefix()).isEqualTo(new IpPrefix(24, 56));
      assertThat(c.budget().trustedProxies()).extracting(Object::toString)
          .containsExactly("10.0.0.0/8", "::1");
      assertThat(c.toBuilder().build()).isEqualTo(c);
    }

    @Test
    void defaults_shouldCapAHostAt64_andHttpAt512_withoutTrustedProxies() {
      assertThat(RelayConfig.DEFAULT.budget()).isEqualTo(BudgetConfig.DEFAULT);
      assertThat(BudgetConfig.DEFAULT.maxConnectionsPerIp()).isEqualTo(64);
      assertThat(BudgetConfig.DEFAULT.httpMaxConnections()).isEqualTo(512);
      assertThat(BudgetConfig.DEFAULT.trustedProxies()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"RELAY_MAX_CONNECTIONS_PER_IP=0", "RELAY_HTTP_MAX_CONNECTIONS=x",
        "RELAY_IPV4_PREFIX_LENGTH=33", "RELAY_IPV6_PREFIX_LENGTH=0",
        "RELAY_TRUSTED_PROXIES=proxy.example.com", "RELAY_TRUSTED_PROXIES=10.0.0.0/40"})
    void fromEnvironment_shouldRejectABadBudgetSetting_namingItsVariable(
        final String assignment) {
      final String[] parts = assignment.split("=", 2);
      assertThat(rejected(parts[0], parts[1]).variable()).isEqualTo(parts[0]);
    }
  }

  @Nested
  class Circuit {
    @Test
    void defaults_shouldBeTheJsRelays() {
      final CircuitConfig c = RelayConfig.DEFAULT.circuit();
      assertThat(c.relay().hopTimeout()).isEqualTo(Duration.ofSeconds(300));
      assertThat(c.relay().maxReservations()).isEqualTo(10_000);
      assertThat(c.relay().reservationTtl()).isEqualTo(Duration.ofHours(20));
      assertThat(c.relay().defaultDataLimit()).isEqualTo(10L << 30);
      assertThat(c.relay().defaultDurationLimit()).isEqualTo(Duration.ofMinutes(20));
      assertThat(c.discoveryTopics()).containsExactly("todo._peer-discovery._p2p._pubsub");
      assertThat(c.discoveryInterval()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void fromEnvironment_shouldReadEveryCircuitVariable_withZeroMeaningUnlimited() {
      final CircuitConfig c = env("RELAY_CIRCUIT_HOP_TIMEOUT_MS", "1500",
          "RELAY_CIRCUIT_MAX_RESERVATIONS", "0", "RELAY_CIRCUIT_RESERVATION_TTL_MS", "0",
          "RELAY_CIRCUIT_DEFAULT_DATA_LIMIT_BYTES", "0",
          "RELAY_CIRCUIT_DEFAULT_DURATION_LIMIT_MS", "0").circuit();
      assertThat(c.relay().hopTimeout()).isEqualTo(Duration.ofMillis(1500));
      assertThat(c.relay().maxReservations()).isZero();
      assertThat(c.relay().reservationTtl()).isZero();
      assertThat(c.relay().defaultDataLimit()).isZero();
      assertThat(c.relay().defaultDurationLimit()).isZero();
      assertThat(c.relay().limited()).isFalse();
      assertThat(env("RELAY_CIRCUIT_DEFAULT_DATA_LIMIT_BYTES", "131072").circuit().relay()
          .defaultDataLimit()).isEqualTo(131_072);
    }

    @Test
    void fromEnvironment_shouldReadPubsubTopics_andTheirViteAlias() {
      assertThat(env("PUBSUB_TOPICS", "a._peer-discovery, b").circuit().discoveryTopics())
          .containsExactly("a._peer-discovery", "b");
      assertThat(env("VITE_PUBSUB_TOPICS", "vite-topic").circuit().discoveryTopics())
          .containsExactly("vite-topic");
      assertThat(env("PUBSUB_TOPICS", "x", "VITE_PUBSUB_TOPICS", "y").circuit()
          .discoveryTopics()).containsExactly("x");
    }

    @ParameterizedTest
    @ValueSource(strings = {"RELAY_CIRCUIT_HOP_TIMEOUT_MS=0", "RELAY_CIRCUIT_HOP_TIMEOUT_MS=-5",
        "RELAY_CIRCUIT_MAX_RESERVATIONS=many", "RELAY_CIRCUIT_MAX_RESERVATIONS=1000001",
        "RELAY_CIRCUIT_RESERVATION_TTL_MS=999999999999",
        "RELAY_CIRCUIT_DEFAULT_DATA_LIMIT_BYTES=-1",
        "RELAY_CIRCUIT_DEFAULT_DURATION_LIMIT_MS=86400001", "PUBSUB_TOPICS=has space"})
    void fromEnvironment_shouldRejectBadCircuitValues_namingTheVariable(final String assignment) {
      final String[] parts = assignment.split("=", 2);
      assertThat(rejected(parts[0], parts[1]).variable()).isEqualTo(parts[0]);
    }
  }

  @Nested
  class AutoTls {
    @Test
    void fromEnvironment_shouldDisableAutoTls_forAnyValueButFalseSpellings() {
      for (final String value : List.of("true", "1", "yes", "disabled", "anything")) {
        assertThat(env("disableAutoTLS", value).tls().autoTlsDisabled()).as(value).isTrue();
      }
      for (final String value : List.of("false", "0", "FALSE", "no", "off")) {
        assertThat(env("disableAutoTLS", value).tls().autoTlsDisabled()).as(value).isFalse();
      }
    }

    @Test
    void fromEnvironment_shouldPickTheAcmeDirectory_fromStagingOrTheVariable() {
      assertThat(RelayConfig.DEFAULT.tls().effectiveAcmeDirectory())
          .isEqualTo(TlsConfig.LETS_ENCRYPT);
      assertThat(env("STAGING", "true").tls().effectiveAcmeDirectory())
          .isEqualTo(TlsConfig.LETS_ENCRYPT_STAGING);
      assertThat(RelayConfig.fromEnvironment(Map.of("STAGING", "true",
          "RELAY_AUTOTLS_ACME_DIRECTORY", "https://acme.example/dir")).tls()
          .effectiveAcmeDirectory()).isEqualTo(java.net.URI.create("https://acme.example/dir"));
      assertThat(RelayConfig.DEFAULT.tls().brokerUrl()).isEqualTo(TlsConfig.DEFAULT_BROKER_URL);
      assertThat(env("RELAY_AUTOTLS_BROKER_URL", "http://127.0.0.1:8080").tls().brokerUrl())
          .hasToString("http://127.0.0.1:8080");
      assertThat(env("RELAY_AUTOTLS_FORCE", "true").tls().autoTlsForced()).isTrue();
      assertThat(RelayConfig.DEFAULT.tls().autoTlsForced()).isFalse();
    }

    @Test
    void fromEnvironment_shouldRejectUrlsThatAreNotHttp() {
      assertThat(rejected("RELAY_AUTOTLS_BROKER_URL", "ftp://x.example"))
          .hasMessageContaining("RELAY_AUTOTLS_BROKER_URL");
      assertThat(rejected("RELAY_AUTOTLS_ACME_DIRECTORY", "not a url"))
          .hasMessageContaining("RELAY_AUTOTLS_ACME_DIRECTORY");
    }

    @Test
    void toBuilder_shouldKeepTheAutoTlsSettings() {
      final RelayConfig config = RelayConfig.fromEnvironment(Map.of("STAGING", "1",
          "RELAY_AUTOTLS_FORCE", "yes", "RELAY_AUTOTLS_BROKER_URL", "https://b.example"));
      assertThat(config.toBuilder().build()).isEqualTo(config);
    }
  }
  @Nested
  class StorageLimitsVariables {
    @Test
    void defaults_areNoQuota_aOneGibCache_gcEveryTenMinutesWithAFifteenMinuteGrace() {
      assertThat(RelayConfig.DEFAULT.storage().limits()).isEqualTo(new StorageLimits(0,
          1L << 30, Duration.ofMinutes(10), Duration.ofMinutes(15)));
    }

    @Test
    void theFourVariables_areRead_andSurviveToBuilder() {
      final RelayConfig config = env("RELAY_STORAGE_MAX_BYTES", "10737418240",
          "RELAY_GATEWAY_CACHE_MAX_BYTES", "0", "RELAY_GC_INTERVAL_MS", "0",
          "RELAY_GC_GRACE_MS", "60000");
      assertThat(config.storage().limits()).isEqualTo(new StorageLimits(10L << 30, 0,
          Duration.ZERO, Duration.ofMinutes(1)));
      assertThat(config.toBuilder().build()).isEqualTo(config);
    }

    @Test
    void badValues_nameTheVariable() {
      assertThat(rejected("RELAY_STORAGE_MAX_BYTES", "-1").getMessage())
          .contains("RELAY_STORAGE_MAX_BYTES");
      assertThat(rejected("RELAY_GATEWAY_CACHE_MAX_BYTES", "1GB").getMessage())
          .contains("RELAY_GATEWAY_CACHE_MAX_BYTES");
      assertThat(rejected("RELAY_GC_GRACE_MS", "soon").getMessage())
          .contains("RELAY_GC_GRACE_MS");
    }
  }

  @Nested
  class Dht {
    @Test
    void fromEnvironment_shouldRunDhtAsClient_whenNothingIsSet() {
      assertThat(RelayConfig.DEFAULT.network().dhtMode()).isEqualTo(DhtMode.CLIENT);
    }

    @Test
    void fromEnvironment_shouldParseEveryMode_inAnyCase() {
      assertThat(env("RELAY_DHT_MODE", "off").network().dhtMode()).isEqualTo(DhtMode.OFF);
      assertThat(env("RELAY_DHT_MODE", "client").network().dhtMode()).isEqualTo(DhtMode.CLIENT);
      assertThat(env("RELAY_DHT_MODE", "SERVER").network().dhtMode()).isEqualTo(DhtMode.SERVER);
      assertThat(env("RELAY_DHT_MODE", " Auto ").network().dhtMode()).isEqualTo(DhtMode.AUTO);
      assertThat(rejected("RELAY_DHT_MODE", "on"))
          .hasMessageContaining("RELAY_DHT_MODE").hasMessageContaining("off, client, server or auto");
    }

    @Test
    void fromEnvironment_shouldTurnDhtOff_whenRelayDisableDhtIsTrue() {
      assertThat(env("RELAY_DISABLE_DHT", "1").network().dhtMode()).isEqualTo(DhtMode.OFF);
      assertThat(env("RELAY_DISABLE_DHT", "true", "RELAY_DHT_MODE", "off").network().dhtMode())
          .isEqualTo(DhtMode.OFF);
      assertThat(env("RELAY_DISABLE_DHT", "false", "RELAY_DHT_MODE", "server").network()
          .dhtMode()).isEqualTo(DhtMode.SERVER);
      assertThat(env("RELAY_DISABLE_DHT", "no").network().dhtMode()).isEqualTo(DhtMode.CLIENT);
    }

    @Test
    void fromEnvironment_shouldRefuseStart_whenRelayDisableDhtContradictsTheMode() {
      assertThat(rejected("RELAY_DISABLE_DHT", "1", "RELAY_DHT_MODE", "server"))
          .hasMessageContaining("RELAY_DISABLE_DHT=1")
          .hasMessageContaining("contradicts RELAY_DHT_MODE=server");
      assertThat(rejected("RELAY_DISABLE_DHT", "false", "RELAY_DHT_MODE", "off").variable())
          .isEqualTo("RELAY_DISABLE_DHT");
      assertThat(rejected("RELAY_DISABLE_DHT", "maybe").variable())
          .isEqualTo("RELAY_DISABLE_DHT");
    }

    @Test
    void bootstrapAddresses_shouldAcceptDnsAddrWithoutPeerId_whenItsTxtRecordsNameThePeers() {
      assertThat(env("RELAY_BOOTSTRAP_PEERS", "/dnsaddr/bootstrap.libp2p.io,"
          + "/dnsaddr/bootstrap.libp2p.io/p2p/QmNnooDu7bfjPFoTZYxMNLWUQJyrVwtbZg5gBMjTezGAJN")
          .network().bootstrapAddresses()).hasSize(2);
      assertThatThrownBy(() -> env("RELAY_BOOTSTRAP_PEERS", "/dns4/a.example/tcp/4001").network()
          .bootstrapAddresses()).hasMessageContaining("does not end in /p2p/<peer id>");
    }

    @Test
    void toBuilder_shouldKeepTheMode() {
      final RelayConfig c = env("RELAY_DHT_MODE", "server");
      assertThat(c.toBuilder().build()).isEqualTo(c);
    }
  }
}
