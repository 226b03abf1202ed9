package io.relaypinner.libp2p.multistream;

import java.util.List;
import java.util.Set;

/** A fixed set of ids, advertised in the order given; see {@link ProtocolMatcher#exact}. */
record ExactProtocolMatcher(List<String> advertised, Set<String> ids) implements ProtocolMatcher {
  @Override
  public boolean matches(final String protocol) {
    return ids.contains(protocol);
  }
}
