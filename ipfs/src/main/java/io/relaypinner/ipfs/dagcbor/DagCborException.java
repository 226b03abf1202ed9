package io.relaypinner.ipfs.dagcbor;

/**
 * Bytes that are not strict DAG-CBOR ({@code ipld/ipld} {@code specs/codecs/dag-cbor/spec.md}), or
 * a value that DAG-CBOR cannot represent. Decoding failures name the rule broken and the byte
 * offset; whoever supplied the bytes is to blame.
 */
public final class DagCborException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public DagCborException(final String message) {
    super(message);
  }

  public DagCborException(final String message, final Throwable cause) {
    super(message, cause);
  }

  static DagCborException at(final int offset, final String message) {
    return new DagCborException(message + " at offset " + offset);
  }
}
