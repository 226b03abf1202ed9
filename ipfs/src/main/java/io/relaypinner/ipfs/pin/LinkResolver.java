package io.relaypinner.ipfs.pin;

import io.relaypinner.multiformats.Cid;
import java.util.List;

/**
 * Extracts the CIDs a block links to, as the IPLD data model defines them for the block's codec:
 * dag-pb {@code PBLink.Hash}, every dag-cbor tag-42 CID, none for raw. OrbitDB's string-valued
 * {@code next}/{@code refs} are not IPLD links and are not returned.
 *
 * <p>Implementations are stateless and thread-safe. Bytes that do not decode under the codec
 * throw {@link LinkResolutionException}; so does a codec nobody registered, because a walker that
 * silently skipped it would let GC delete that block's children.
 */
@FunctionalInterface
public interface LinkResolver {
  /** The links of {@code block}, which is stored under {@code cid}, in block order. */
  List<Cid> links(Cid cid, byte[] block);
}
