package io.relaypinner.handoff.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ImageManifestTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static ImageManifest parse(final String json) throws Exception {
    return ImageManifest.fromJson(JSON.readTree(json));
  }

  @ParameterizedTest
  @CsvSource({
      "orbitdb-relay, true, PULL",
      "orbitdb-relay, false, PUSH",
      "uc-go-peer, false, PULL",
      "uc-go-peer, true, PULL",
      "ucan-store, false, PUSH",
      "ucan-store, true, PULL"})
  void handoff_shouldFollowFlagOrUcGoPeer_whenChosen(final String profile, final boolean flag,
      final HandoffMode expected) {
    assertThat(new ImageManifest(profile, "v1", flag, ImageManifest.RELAY_PORTS).handoff())
        .isEqualTo(expected);
  }

  @Test
  void builtIn_shouldBeOrbitdbRelayWithPull_always() {
    assertThat(ImageManifest.BUILT_IN.profile()).isEqualTo("orbitdb-relay");
    assertThat(ImageManifest.BUILT_IN.supportsBootstrapConfigAggregate()).isTrue();
    assertThat(ImageManifest.BUILT_IN.handoff()).isEqualTo(HandoffMode.PULL);
    assertThat(ImageManifest.BUILT_IN.tcpPorts()).containsExactly(22, 80, 9090, 9091, 9092);
  }

  @Test
  void forRelayProfile_shouldDeclareTheFlag_whenDbRelayProfile() {
    final ImageManifest generated = ImageManifest.forRelayProfile("couch-relay");
    assertThat(generated.supportsBootstrapConfigAggregate()).isTrue();
    assertThat(generated.toJson().path("supportsBootstrapConfigAggregate").asBoolean()).isTrue();
    assertThatThrownBy(() -> ImageManifest.forRelayProfile("uc-go-peer"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("<db>-relay");
  }

  @Test
  void fromJson_shouldReadPublicManifest_whenExtraMembers() throws Exception {
    final ImageManifest manifest = parse("{\"profile\":\"orbitdb-relay\",\"version\":"
        + "\"orbitdb-relay-v0.10.0\",\"rootfsInstallStrategy\":\"prebaked\","
        + "\"supportsBootstrapConfigAggregate\":true,\"requiredPortForwards\":[{\"port\":22,"
        + "\"tcp\":true,\"udp\":false,\"purpose\":\"SSH\"},{\"port\":9093,\"tcp\":false,"
        + "\"udp\":true}],\"rootfsSizeMiB\":20480}");
    assertThat(manifest.handoff()).isEqualTo(HandoffMode.PULL);
    assertThat(manifest.requiredPorts()).hasSize(2);
    assertThat(manifest.port(9093).orElseThrow().udp()).isTrue();
    assertThat(ImageManifest.fromJson(manifest.toJson())).isEqualTo(manifest);
  }

  @Test
  void fromJson_shouldDefaultToPush_whenFlagAbsent() throws Exception {
    assertThat(parse("{\"profile\":\"orbitdb-relay\",\"version\":\"v0.9.7\"}").handoff())
        .isEqualTo(HandoffMode.PUSH);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "{\"version\":\"v\"}|profile",
      "{\"profile\":\"p\"}|version",
      "{\"profile\":\"p\",\"version\":\" \"}|version",
      "{\"profile\":\"p\",\"version\":\"v\",\"supportsBootstrapConfigAggregate\":\"yes\"}|boolean",
      "{\"profile\":\"p\",\"version\":\"v\",\"requiredPortForwards\":[{\"port\":0}]}|1-65535",
      "{\"profile\":\"p\",\"version\":\"v\",\"requiredPortForwards\":[{\"port\":true}]}|integer",
      "{\"profile\":\"p\",\"version\":\"v\",\"requiredPortForwards\":[{\"port\":1,\"tcp\":false}]}"
          + "|tcp, udp",
      "{\"profile\":\"BAD PROFILE\",\"version\":\"v\"}|profile",
      "[]|JSON object"})
  void fromJson_shouldNameTheMember_whenInvalid(final String json, final String message) {
    assertThatThrownBy(() -> parse(json)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }
}
