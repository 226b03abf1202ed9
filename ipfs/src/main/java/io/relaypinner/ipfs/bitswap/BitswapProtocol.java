package io.relaypinner.ipfs.bitswap;

import java.util.List;

/**
 * The bitswap protocol ids (ipfs/specs src/bitswap-protocol.md). Helia speaks only 1.2.0; Kubo
 * and older nodes may speak 1.1.0 (CID prefixes, no presences) or 1.0.0 (CIDv0 blocks only).
 */
public final class BitswapProtocol {
  public static final String BITSWAP_1_2 = "/ipfs/bitswap/1.2.0";
  public static final String BITSWAP_1_1 = "/ipfs/bitswap/1.1.0";
  public static final String BITSWAP_1_0 = "/ipfs/bitswap/1.0.0";
  /** What we answer and offer, best first. */
  public static final List<String> PROTOCOL_IDS = List.of(BITSWAP_1_2, BITSWAP_1_1, BITSWAP_1_0);

  /** The message dialect of a negotiated protocol id. */
  public enum Version {
    V1_0, V1_1, V1_2;

    /** The dialect of {@code protocol}, 1.2.0 for anything newer we do not know. */
    public static Version of(final String protocol) {
      if (BITSWAP_1_0.equals(protocol)) {
        return V1_0;
      } else if (BITSWAP_1_1.equals(protocol)) {
        return V1_1;
      }
      return V1_2;
    }
  }

  private BitswapProtocol() {}
}
