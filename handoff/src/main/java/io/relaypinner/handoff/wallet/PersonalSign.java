package io.relaypinner.handoff.wallet;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.bouncycastle.math.ec.ECPoint;

/**
 * EIP-191 version {@code 0x45} ("personal_sign"): the signed digest is
 * {@code keccak256("\x19Ethereum Signed Message:\n" + decimal byte length + message)}. Text
 * messages are signed as their UTF-8 bytes, which is what ethers' {@code signMessage(string)},
 * {@code eth-account}'s {@code encode_defunct(text=…)} and MetaMask (given the hex of those
 * bytes) do.
 */
public final class PersonalSign {
  /** The prefix before the decimal length. */
  public static final String PREFIX = "\u0019Ethereum Signed Message:\n";

  private PersonalSign() {}

  /** The EIP-191 digest of raw message bytes (ethers' {@code hashMessage}). */
  public static byte[] hash(final byte[] message) {
    final byte[] prefix = (PREFIX + message.length).getBytes(StandardCharsets.US_ASCII);
    final byte[] all = new byte[prefix.length + message.length];
    System.arraycopy(prefix, 0, all, 0, prefix.length);
    System.arraycopy(message, 0, all, prefix.length, message.length);
    return Keccak.keccak256(all);
  }

  /** The EIP-191 digest of a text message, signed as its UTF-8 bytes. */
  public static byte[] hash(final String message) {
    return hash(message.getBytes(StandardCharsets.UTF_8));
  }

  /** The address whose key made {@code signature} over {@code message}, if any. */
  public static Optional<EthAddress> recover(final byte[] message, final EthSignature signature) {
    final ECPoint q = Secp256k1.recover(
        hash(message), signature.r(), signature.s(), signature.recoveryId());
    return q == null ? Optional.empty() : Optional.of(EthAddress.ofPublicKey(q.getEncoded(false)));
  }

  /** {@link #recover(byte[], EthSignature)} for a text message (UTF-8). */
  public static Optional<EthAddress> recover(final String message, final EthSignature signature) {
    return recover(message.getBytes(StandardCharsets.UTF_8), signature);
  }

  /** True when {@code signature} over the text {@code message} was made by {@code signer}. */
  public static boolean verify(
      final String message, final EthSignature signature, final EthAddress signer) {
    return recover(message, signature).map(signer::equals).orElse(false);
  }
}
