package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A guest image manifest (spec 2.8; notes/handoff.md 4.1): the image's {@code profile}, its
 * {@code version}, whether it implements the guest-side fetch of the pull handoff
 * ({@code supportsBootstrapConfigAggregate}) and the ports it needs forwarded. Other members of
 * the public manifests (rootfs hashes, sizes, notes) are accepted and ignored.
 *
 * <p>Handoff choice (spec 2.8, notes 4.2): pull when the manifest declares the flag or when the
 * profile is {@code uc-go-peer} (whose images implement the fetch without declaring it); push
 * otherwise. Manifests generated here for a {@code <db>-relay} profile declare the flag, because
 * this project's guest ({@code relay-pinner guest setup-server}) always runs the pull agent.
 *
 * @param profile the image profile, e.g. {@code orbitdb-relay}
 * @param version the image version (non-empty)
 * @param supportsBootstrapConfigAggregate the declared flag
 * @param requiredPorts the ports the image needs forwarded
 */
public record ImageManifest(String profile, String version,
    boolean supportsBootstrapConfigAggregate, List<PortForward> requiredPorts) {
  /** The profile whose images pull without declaring the flag. */
  public static final String UC_GO_PEER = "uc-go-peer";
  /** The profile of this project's relay. */
  public static final String ORBITDB_RELAY = "orbitdb-relay";
  /** Guest port of the temporary setup endpoint. */
  public static final int SETUP_PORT = 80;
  /** Guest port of the relay's HTTP listener. */
  public static final int METRICS_PORT = 9090;
  /** Guest port of the relay's libp2p TCP listener. */
  public static final int TCP_PORT = 9091;
  /** Guest port of the relay's libp2p WebSocket listener. */
  public static final int WS_PORT = 9092;

  private static final Pattern RELAY_PROFILE = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}-relay");
  private static final Pattern PROFILE = Pattern.compile("[a-z0-9][a-z0-9._-]{0,127}");
  private static final long MAX_FILE_SIZE = 256 * 1024;
  private static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build());

  /** The ports of this project's relay image (SSH, setup endpoint, HTTP, TCP, WebSocket). */
  public static final List<PortForward> RELAY_PORTS = List.of(
      PortForward.tcp(22, "SSH"),
      PortForward.tcp(SETUP_PORT, "Temporary setup endpoint"),
      PortForward.tcp(METRICS_PORT, "Relay HTTP: health, multiaddrs, metrics, pinning"),
      PortForward.tcp(TCP_PORT, "libp2p TCP"),
      PortForward.tcp(WS_PORT, "libp2p WebSocket"));

  /** This build's version (the jar manifest's), {@code dev} when run from classes. */
  public static final String BUILD_VERSION = Optional.ofNullable(
      ImageManifest.class.getPackage().getImplementationVersion()).orElse("dev");

  /** The built-in manifest: profile {@code orbitdb-relay}, this build's version, pull. */
  public static final ImageManifest BUILT_IN = forRelayProfile(ORBITDB_RELAY);

  public ImageManifest {
    Objects.requireNonNull(profile, "profile");
    Objects.requireNonNull(version, "version");
    if (!PROFILE.matcher(profile).matches()) {
      throw new IllegalArgumentException("profile must be 1-128 characters of a-z, 0-9, '.', "
          + "'_', '-': got \"" + clip(profile) + "\"");
    }
    if (version.isBlank()) {
      throw new IllegalArgumentException("version must not be empty");
    }
    requiredPorts = List.copyOf(requiredPorts);
  }

  /**
   * The manifest this project generates for a {@code <db>-relay} profile: the flag declared, the
   * relay's ports, this build's version.
   *
   * @throws IllegalArgumentException when {@code profile} is not of the form {@code <db>-relay}
   */
  public static ImageManifest forRelayProfile(final String profile) {
    if (!RELAY_PROFILE.matcher(profile).matches()) {
      throw new IllegalArgumentException("a generated manifest needs a <db>-relay profile such "
          + "as orbitdb-relay; got \"" + clip(profile) + "\"");
    }
    return new ImageManifest(profile, "relay-pinner-" + BUILD_VERSION, true, RELAY_PORTS);
  }

  /** The handoff this image uses (spec 2.8). */
  public HandoffMode handoff() {
    return supportsBootstrapConfigAggregate || UC_GO_PEER.equals(profile)
        ? HandoffMode.PULL : HandoffMode.PUSH;
  }

  /** Whether the image can be configured by pull (it implements the guest-side fetch). */
  public boolean supportsPull() {
    return handoff() == HandoffMode.PULL;
  }

  /** The guest ports to forward, TCP ones, in ascending order, 22 and 80 always included. */
  public Set<Integer> tcpPorts() {
    final Set<Integer> ports = new TreeSet<>(List.of(22, SETUP_PORT));
    requiredPorts.stream().filter(PortForward::tcp).forEach(p -> ports.add(p.port()));
    return ports;
  }

  /** The forward of {@code port}, if the image requests it. */
  public Optional<PortForward> port(final int port) {
    return requiredPorts.stream().filter(p -> p.port() == port).findFirst();
  }

  /**
   * Reads a manifest file (JSON, at most 256 KiB).
   *
   * @throws IOException when the file cannot be read
   * @throws IllegalArgumentException naming the bad member
   */
  public static ImageManifest load(final Path file) throws IOException {
    if (Files.size(file) > MAX_FILE_SIZE) {
      throw new IllegalArgumentException(file + " is larger than " + MAX_FILE_SIZE + " bytes");
    }
    final JsonNode node;
    try {
      node = MAPPER.readTree(Files.readAllBytes(file));
    } catch (final IOException e) {
      throw new IllegalArgumentException(file + " is not JSON: " + e.getMessage(), e);
    }
    return fromJson(node);
  }

  /**
   * Reads a manifest (notes/handoff.md 4.1 member names).
   *
   * @throws IllegalArgumentException naming the bad member
   */
  public static ImageManifest fromJson(final JsonNode node) {
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("a manifest is a JSON object");
    }
    final JsonNode profile = node.get("profile");
    if (profile == null || !profile.isTextual()) {
      throw new IllegalArgumentException("manifest profile must be a string");
    }
    final JsonNode version = node.get("version");
    if (version == null || !version.isTextual() || version.asText().isBlank()) {
      throw new IllegalArgumentException("manifest version must be a non-empty string");
    }
    final JsonNode flag = node.get("supportsBootstrapConfigAggregate");
    if (flag != null && !flag.isNull() && !flag.isBoolean()) {
      throw new IllegalArgumentException(
          "manifest supportsBootstrapConfigAggregate must be a boolean when present");
    }
    final List<PortForward> ports = new ArrayList<>();
    final JsonNode forwards = node.get("requiredPortForwards");
    if (forwards != null && !forwards.isNull()) {
      if (!forwards.isArray() || forwards.size() > 64) {
        throw new IllegalArgumentException(
            "manifest requiredPortForwards must be an array of at most 64 objects");
      }
      for (final JsonNode forward : forwards) {
        final JsonNode port = forward.get("port");
        if (port == null || !port.isIntegralNumber() || !port.canConvertToInt()) {
          throw new IllegalArgumentException(
              "manifest requiredPortForwards[].port must be an integer 1-65535");
        }
        final boolean tcp = bool(forward, "tcp", true);
        final boolean udp = bool(forward, "udp", false);
        ports.add(new PortForward(port.intValue(), tcp, udp, forward.path("purpose").asText("")));
      }
    }
    return new ImageManifest(profile.asText(), version.asText(),
        flag != null && flag.asBoolean(false), ports);
  }

  private static boolean bool(final JsonNode forward, final String field, final boolean dflt) {
    final JsonNode value = forward.get(field);
    if (value == null || value.isNull()) {
      return dflt;
    }
    if (!value.isBoolean()) {
      throw new IllegalArgumentException(
          "manifest requiredPortForwards[]." + field + " must be a boolean");
    }
    return value.booleanValue();
  }

  /** The manifest as JSON (the same member names). */
  public ObjectNode toJson() {
    final ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("profile", profile);
    node.put("version", version);
    if (supportsBootstrapConfigAggregate) {
      node.put("supportsBootstrapConfigAggregate", true);
    }
    final ArrayNode ports = node.putArray("requiredPortForwards");
    for (final PortForward p : requiredPorts) {
      final ObjectNode entry = ports.addObject();
      entry.put("port", p.port());
      entry.put("tcp", p.tcp());
      entry.put("udp", p.udp());
      if (!p.purpose().isEmpty()) {
        entry.put("purpose", p.purpose());
      }
    }
    return node;
  }

  private static String clip(final String text) {
    return text.length() <= 60 ? text : text.substring(0, 60) + "…";
  }
}
