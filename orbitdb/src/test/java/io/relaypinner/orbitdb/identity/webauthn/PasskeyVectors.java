package io.relaypinner.orbitdb.identity.webauthn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.identity.Identity;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/** The vectors of interop/js/webauthn/make-vectors.mjs (resource webauthn/vectors.json). */
final class PasskeyVectors {
  static final PasskeyVectors LOADED = load();

  final String origin;
  final String rpId;
  final String logId;
  private final JsonNode cases;

  private PasskeyVectors(final JsonNode root) {
    origin = root.get("origin").asText();
    rpId = root.get("rpId").asText();
    logId = root.get("logId").asText();
    cases = root.get("cases");
  }

  private static PasskeyVectors load() {
    try (InputStream in = PasskeyVectors.class.getResourceAsStream("/webauthn/vectors.json")) {
      return new PasskeyVectors(new ObjectMapper().readTree(in));
    } catch (final IOException e) {
      throw new IllegalStateException(e);
    }
  }

  record Block(Cid cid, byte[] bytes) {}

  record Case(String name, String type, String id, boolean valid, Block identity,
      List<Block> entries) {
    Identity decoded() {
      return Identity.decode(identity.cid, identity.bytes);
    }
  }

  Case get(final String name) {
    for (final JsonNode c : cases) {
      if (c.get("name").asText().equals(name)) {
        final List<Block> entries = new ArrayList<>();
        for (final JsonNode e : c.get("entries")) {
          entries.add(block(e));
        }
        return new Case(name, c.get("type").asText(), c.get("id").asText(),
            c.get("valid").asBoolean(), block(c.get("identity")), entries);
      }
    }
    throw new IllegalArgumentException("no vector " + name);
  }

  private static Block block(final JsonNode node) {
    return new Block(Cid.parse(node.get("cid").asText()),
        Base64.getDecoder().decode(node.get("block").asText()));
  }
}
