package io.relaypinner.handoff.records;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.handoff.json.CanonicalJson;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.EthSignature;
import io.relaypinner.handoff.wallet.PersonalSign;
import io.relaypinner.handoff.wallet.WalletFormatException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Checks an {@link AlephMessage} the way an Aleph node does for an ETH message, strictly:
 * chain {@code ETH}, {@code item_type} inline, {@code item_content} within the size limit,
 * {@code item_hash} = SHA-256 of {@code item_content}, the EIP-191 signature of
 * {@link AlephMessage#signedText()} recovers to {@code sender} (low-S, v 27/28), the content is one
 * strict JSON object (no duplicate names) of the type's shape, and its {@code address} is the
 * sender. Addresses compare as 20-byte values, so letter case never matters.
 *
 * <p>The record service runs it on every message it accepts; a deployer can run it on the posts it
 * reads (for example to authenticate a guest's acknowledgement by its publisher address).
 */
public final class MessageVerifier {
  /** Default largest {@code item_content}, in UTF-8 bytes. */
  public static final int DEFAULT_MAX_ITEM_CONTENT_BYTES = 128 * 1024;

  private final int maxItemContentBytes;

  public MessageVerifier(final int maxItemContentBytes) {
    if (maxItemContentBytes < 1) {
      throw new IllegalArgumentException("maxItemContentBytes must be positive");
    }
    this.maxItemContentBytes = maxItemContentBytes;
  }

  /** A verifier with {@link #DEFAULT_MAX_ITEM_CONTENT_BYTES}. */
  public MessageVerifier() {
    this(DEFAULT_MAX_ITEM_CONTENT_BYTES);
  }

  /**
   * Verifies everything, or throws naming the first failure.
   *
   * @throws RecordRejectedException 422 (or 413 for an oversized {@code item_content}) with the
   *     {@link ErrorCodes} code of the failure
   */
  public VerifiedMessage verify(final AlephMessage message) {
    if (!AlephMessage.CHAIN_ETH.equals(message.chain())) {
      throw RecordRejectedException.invalid(ErrorCodes.UNSUPPORTED_CHAIN, "chain "
          + AlephMessage.abbreviate(message.chain()) + " is not supported (only ETH)");
    }
    if (!AlephMessage.ITEM_TYPE_INLINE.equals(message.itemType())) {
      throw RecordRejectedException.invalid(ErrorCodes.UNSUPPORTED_ITEM_TYPE, "item_type "
          + AlephMessage.abbreviate(message.itemType()) + " is not supported (only inline)");
    }
    if (!Double.isFinite(message.time()) || message.time() < 0) {
      throw RecordRejectedException.invalid(
          ErrorCodes.INVALID_MESSAGE, "time must be a non-negative number");
    }
    final EthAddress sender;
    try {
      sender = EthAddress.parse(message.sender());
    } catch (final WalletFormatException e) {
      throw RecordRejectedException.invalid(
          ErrorCodes.INVALID_MESSAGE, "sender: " + e.getMessage());
    }
    final int contentBytes = message.itemContent().getBytes(StandardCharsets.UTF_8).length;
    if (contentBytes > maxItemContentBytes) {
      throw new RecordRejectedException(413, ErrorCodes.PAYLOAD_TOO_LARGE, "item_content is "
          + contentBytes + " bytes, over the limit of " + maxItemContentBytes);
    }
    if (!RecordContent.ITEM_HASH.matcher(message.itemHash()).matches()) {
      throw RecordRejectedException.invalid(ErrorCodes.ITEM_HASH_MISMATCH,
          "item_hash must be 64 lowercase hex digits");
    }
    final String expectedHash = AlephMessage.itemHashOf(message.itemContent());
    if (!expectedHash.equals(message.itemHash())) {
      throw RecordRejectedException.invalid(ErrorCodes.ITEM_HASH_MISMATCH,
          "item_hash " + message.itemHash() + " is not the SHA-256 of item_content ("
              + expectedHash + ")");
    }
    if (message.signature() == null) {
      throw RecordRejectedException.invalid(
          ErrorCodes.INVALID_SIGNATURE, "message is unsigned (no signature)");
    }
    final EthSignature signature;
    try {
      signature = EthSignature.parse(message.signature());
    } catch (final WalletFormatException e) {
      throw RecordRejectedException.invalid(
          ErrorCodes.INVALID_SIGNATURE, "signature: " + e.getMessage());
    }
    final Optional<EthAddress> signer = PersonalSign.recover(message.signedText(), signature);
    if (signer.isEmpty() || !signer.get().equals(sender)) {
      throw RecordRejectedException.invalid(ErrorCodes.INVALID_SIGNATURE,
          "signature was not made by the sender " + sender);
    }
    final JsonNode contentNode;
    try {
      contentNode = CanonicalJson.parse(message.itemContent());
    } catch (final JsonProcessingException e) {
      throw RecordRejectedException.invalid(ErrorCodes.INVALID_MESSAGE,
          "item_content is not strict JSON: " + e.getOriginalMessage());
    }
    final RecordContent content = RecordContent.parse(message.type(), contentNode);
    if (!EthAddress.parse(content.address()).equals(sender)) {
      throw RecordRejectedException.invalid(ErrorCodes.SENDER_MISMATCH, "content.address "
          + content.address() + " is not the sender " + message.sender());
    }
    return new VerifiedMessage(message, sender, content);
  }
}
