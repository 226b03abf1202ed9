package io.relaypinner.libp2p.core;

/**
 * The remote sent something over a size or count limit (a frame, a list, a block): a {@link
 * ProtocolViolationException} callers can tell from malformed bytes by its type, not its message.
 */
public class LimitExceededException extends ProtocolViolationException {
  private static final long serialVersionUID = 1L;

  public LimitExceededException(final String message) {
    super(message);
  }
}
