package io.relaypinner.handoff.records;

import io.relaypinner.handoff.wallet.EthAddress;
import java.util.Objects;

/**
 * A message whose hash, signature and content shape {@link MessageVerifier} checked: the sender
 * really signed it, and the content's owner is the sender.
 */
public record VerifiedMessage(AlephMessage message, EthAddress sender, RecordContent content) {
  public VerifiedMessage {
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(sender, "sender");
    Objects.requireNonNull(content, "content");
  }
}
