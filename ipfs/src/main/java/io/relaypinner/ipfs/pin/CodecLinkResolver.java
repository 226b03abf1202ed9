package io.relaypinner.ipfs.pin;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.multiformats.Multicodec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A {@link LinkResolver} that dispatches on the CID's codec. {@link #standard()} knows the codecs
 * the relay stores: {@code raw} and {@code libp2p-key} (no links), {@code dag-pb} (UnixFS files and
 * directories) and {@code dag-cbor} (OrbitDB entries, manifests, identities); others can be added
 * with {@link #toBuilder()}.
 *
 * <p>A codec with no resolver throws {@link LinkResolutionException}. Other exceptions thrown by a
 * resolver (malformed bytes) are wrapped in one, naming the CID.
 */
public final class CodecLinkResolver implements LinkResolver {
  private static final LinkResolver NO_LINKS = (cid, block) -> List.of();

  private final Map<Integer, LinkResolver> byCodec;

  private CodecLinkResolver(final Map<Integer, LinkResolver> byCodec) {
    this.byCodec = Map.copyOf(byCodec);
  }

  /** Resolves raw, libp2p-key, dag-pb and dag-cbor blocks. */
  public static CodecLinkResolver standard() {
    return builder()
        .codec(Multicodec.RAW.code(), NO_LINKS)
        .codec(Multicodec.LIBP2P_KEY.code(), NO_LINKS)
        .codec(Multicodec.DAG_PB.code(), (cid, block) -> DagPb.linkedCids(block))
        .codec(Multicodec.DAG_CBOR.code(), (cid, block) -> DagCbor.links(block))
        .build();
  }

  /** An empty builder. */
  public static Builder builder() {
    return new Builder(new HashMap<>());
  }

  /** A builder holding this resolver's codecs. */
  public Builder toBuilder() {
    return new Builder(new HashMap<>(byCodec));
  }

  /** Whether {@code codec} has a resolver. */
  public boolean supports(final int codec) {
    return byCodec.containsKey(codec);
  }

  @Override
  public List<Cid> links(final Cid cid, final byte[] block) {
    final LinkResolver resolver = byCodec.get(cid.codec());
    if (resolver == null) {
      throw new LinkResolutionException(
          "no link resolver for codec " + cid.codecName() + " of " + cid);
    }
    try {
      return List.copyOf(resolver.links(cid, block));
    } catch (final LinkResolutionException e) {
      throw e;
    } catch (final RuntimeException e) {
      throw new LinkResolutionException(
          "cannot read the links of " + cid + " (" + cid.codecName() + "): " + e.getMessage(), e);
    }
  }

  /** Collects codec resolvers; a later registration for a codec replaces the earlier one. */
  public static final class Builder {
    private final Map<Integer, LinkResolver> byCodec;

    private Builder(final Map<Integer, LinkResolver> byCodec) {
      this.byCodec = byCodec;
    }

    /** Resolves blocks of {@code codec} (a multicodec code) with {@code resolver}. */
    public Builder codec(final int codec, final LinkResolver resolver) {
      if (codec < 0) {
        throw new IllegalArgumentException("negative codec " + codec);
      }
      byCodec.put(codec, Objects.requireNonNull(resolver, "resolver"));
      return this;
    }

    /** The resolver. */
    public CodecLinkResolver build() {
      return new CodecLinkResolver(byCodec);
    }
  }
}
