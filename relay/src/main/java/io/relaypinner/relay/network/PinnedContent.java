package io.relaypinner.relay.network;

import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.MultiformatException;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * Whether the relay holds the content of a DHT key (a multihash), for {@code KadDht.holds}: a
 * pinned root of that multihash under any of the codecs the relay pins (dag-pb, raw, dag-cbor,
 * dag-json). The DHT key carries no codec, so each is asked. Blocks inside pinned DAGs and
 * unpinned blocks (the gateway cache) are not announced: what the relay provides is what it
 * promises to keep.
 *
 * <p>Answers from the pin store's datastore (an index read per codec). A store that cannot be
 * read (shared stores down) answers no.
 */
public final class PinnedContent implements Predicate<byte[]> {
  private static final List<Multicodec> CODECS = List.of(Multicodec.DAG_PB, Multicodec.RAW,
      Multicodec.DAG_CBOR, Multicodec.DAG_JSON);

  private final PinStore pins;

  public PinnedContent(final PinStore pins) {
    this.pins = Objects.requireNonNull(pins, "pins");
  }

  @Override
  public boolean test(final byte[] key) {
    final Multihash multihash;
    try {
      multihash = Multihash.decode(key);
    } catch (final MultiformatException e) {
      return false;
    }
    try {
      for (final Multicodec codec : CODECS) {
        if (pins.isPinned(Cid.v1(codec, multihash))) {
          return true;
        }
      }
    } catch (final RuntimeException e) {
      return false;
    }
    return false;
  }
}
