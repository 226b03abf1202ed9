package io.relaypinner.handoff.wallet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import org.bouncycastle.util.BigIntegers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Keys, addresses and EIP-191 signatures against fixed vectors. The signatures and digests were
 * computed with ethers 6.17.0 ({@code Wallet.signMessageSync}, {@code hashMessage}); the addresses
 * of the first and third key also appear in the handoff notes (section 6.3), the second is the
 * well-known first Hardhat account.
 */
class EthWalletTest {
  private static final String KEY_A =
      "0x0123456789012345678901234567890123456789012345678901234567890123";
  private static final String KEY_B =
      "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
  private static final String ALEPH_TEXT = "ETH\n0x14791697260E4c9A71f18484C9f997B308e59325\nPOST\n"
      + "0000000000000000000000000000000000000000000000000000000000000000";

  @ParameterizedTest
  @CsvSource({
      KEY_A + ",0x14791697260E4c9A71f18484C9f997B308e59325",
      KEY_B + ",0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
      "0xbc1b6d755fb648f77c9149b1d4581ce63d0201996528db7f7e160ba49f69ae0d,"
          + "0x5FD528ADF87F6399083773B3017de6D453B10E84",
      "0x74c70c4e78d3348729412a5737dd6eadc04e0d70a5b6cf1892413267c6581293,"
          + "0x565394948614c245C307A279d2149d40569F0498"})
  void address_shouldBeTheChecksummedKeccakOfThePublicKey(final String key,
      final String address) {
    assertThat(EthPrivateKey.parse(key).address().toString()).isEqualTo(address);
    // The 0x prefix is optional on keys.
    assertThat(EthPrivateKey.parse(key.substring(2)).address().toString()).isEqualTo(address);
  }

  @ParameterizedTest
  @CsvSource({
      KEY_A + ",hello,0x0079d91efaa7ca55074617a2c255a8855bc278a3e0ca1b837f60ce000109ef8540960e193b"
          + "e95e38fb2f5307ca0c20108fcc420ff49e48b9a8cb11d9074deb461b",
      KEY_B + ",hello,0xf16ea9a3478698f695fd1401bfe27e9e4a7e8e3da94aa72b021125e31fa899cc573c48ea3f"
          + "e1d4ab61a9db10c19032026e3ed2dbccba5a178235ac27f94504311c",
      KEY_A + ",'',0xf93927710a3a451d0a5e5c00013078156e6e1de125513ef855322bb7cd82f8464973d0cf7adc58"
          + "09004833afc97f5eb98ab3ed5a8a5ad38b2d4e10e071b36faf1b"})
  void signPersonal_shouldEqualEthers_whenSameKeyAndMessage(final String key,
      final String message, final String signature) {
    final EthPrivateKey privateKey = EthPrivateKey.parse(key);
    assertThat(privateKey.signPersonal(message).toHex()).isEqualTo(signature);
    assertThat(PersonalSign.recover(message, EthSignature.parse(signature)))
        .contains(privateKey.address());
  }

  @Test
  void signPersonal_shouldSignTheAlephVerificationText_likeEthers() {
    assertThat(EthPrivateKey.parse(KEY_A).signPersonal(ALEPH_TEXT).toHex()).isEqualTo(
        "0xf577dce57b6641eefa66e900e18ce7c9e887dd9e575683d271a9be051d848d8d05cd09a14f7b1c2948a77c"
            + "2ef877fd35587a016e5fac9652beca398a771840001c");
    assertThat(HexFormat.of().formatHex(PersonalSign.hash(ALEPH_TEXT)))
        .isEqualTo("a4f94f36cd3138b74e5cd709847bca64b7085bbab219721c27dd8dfe5e3ba6ab");
  }

  @Test
  void hash_shouldPrefixTheByteLength_notTheCharacterCount() {
    assertThat(HexFormat.of().formatHex(PersonalSign.hash("hello")))
        .isEqualTo("50b2c43fd39106bafbba0da34fc430e1f91e3c96ea2acee2bc34119f92b37750");
    // "é" is one char but two UTF-8 bytes: the prefix says 2.
    assertThat(PersonalSign.hash("é")).isEqualTo(PersonalSign.hash(new byte[] {(byte) 0xc3,
        (byte) 0xa9}));
  }

  @Test
  void recover_shouldNameAnotherAddress_whenTheMessageChanged() {
    final EthPrivateKey key = EthPrivateKey.generate(new SecureRandom());
    final EthSignature signature = key.signPersonal("pay 1");
    assertThat(PersonalSign.verify("pay 1", signature, key.address())).isTrue();
    assertThat(PersonalSign.verify("pay 2", signature, key.address())).isFalse();
  }

  @Test
  void sign_shouldAlwaysBeLowS_andRecoverable() {
    final SecureRandom random = new SecureRandom();
    for (int i = 0; i < 50; i++) {
      final EthPrivateKey key = EthPrivateKey.generate(random);
      final EthSignature signature = key.signPersonal("message " + i);
      assertThat(signature.s()).isLessThanOrEqualTo(Secp256k1.HALF_N);
      assertThat(signature.v()).isIn(27, 28);
      assertThat(EthSignature.parse(signature.toHex())).isEqualTo(signature);
      assertThat(PersonalSign.recover("message " + i, signature)).contains(key.address());
    }
  }

  @Test
  void parseSignature_shouldRejectHighS_andBadV_andOutOfRangeValues() {
    final EthSignature good = EthPrivateKey.parse(KEY_A).signPersonal("hello");
    final byte[] bytes = good.toBytes();
    final byte[] highS = bytes.clone();
    System.arraycopy(BigIntegers.asUnsignedByteArray(32,
        Secp256k1.N.subtract(good.s())), 0, highS, 32, 32);
    highS[64] = (byte) (good.v() == 27 ? 28 : 27);
    assertThatThrownBy(() -> EthSignature.fromBytes(highS)).hasMessageContaining("high");
    final byte[] badV = bytes.clone();
    badV[64] = 29;
    assertThatThrownBy(() -> EthSignature.fromBytes(badV)).hasMessageContaining("v must be");
    final byte[] zeroR = bytes.clone();
    Arrays.fill(zeroR, 0, 32, (byte) 0);
    assertThatThrownBy(() -> EthSignature.fromBytes(zeroR)).hasMessageContaining("r is out");
    assertThatThrownBy(() -> EthSignature.parse("0x1234")).isInstanceOf(
        WalletFormatException.class);
    assertThatThrownBy(() -> EthSignature.parse(good.toHex().replace('a', 'z')))
        .isInstanceOf(WalletFormatException.class);
  }

  @Test
  void parseSignature_shouldAcceptRawRecoveryIdsAsV() {
    final EthSignature good = EthPrivateKey.parse(KEY_A).signPersonal("hello");
    final byte[] raw = good.toBytes();
    raw[64] = (byte) good.recoveryId();
    assertThat(EthSignature.fromBytes(raw)).isEqualTo(good);
  }

  @ParameterizedTest
  @ValueSource(strings = {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
      "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"})
  void parseAddress_shouldKeepEip55Vectors_andAcceptSingleCase(final String address) {
    assertThat(EthAddress.parse(address).toString()).isEqualTo(address);
    assertThat(EthAddress.parse(address.toLowerCase()).toString()).isEqualTo(address);
    assertThat(EthAddress.parse("0x" + address.substring(2).toUpperCase()))
        .isEqualTo(EthAddress.parse(address));
  }

  @Test
  void parseAddress_shouldRejectBadChecksum_andMalformedText() {
    assertThatThrownBy(() -> EthAddress.parse("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"))
        .hasMessageContaining("EIP-55");
    assertThat(EthAddress.isValid("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")).isFalse();
    assertThat(EthAddress.isValid("0x5aaeb6053f3e94c9b9a09f33669435e7ef1bea")).isFalse();
    assertThat(EthAddress.isValid("0xzaaeb6053f3e94c9b9a09f33669435e7ef1beaed")).isFalse();
    assertThat(EthAddress.isValid(null)).isFalse();
  }

  @Test
  void parseKey_shouldRejectZeroAndOrder_andNeverEchoTheKey() {
    assertThatThrownBy(() -> EthPrivateKey.parse("0x" + "00".repeat(32)))
        .hasMessageContaining("out of range");
    final String n = String.format("%064x", Secp256k1.N);
    assertThatThrownBy(() -> EthPrivateKey.parse(n)).hasMessageContaining("out of range");
    final String secret = "0x" + "ab".repeat(31) + "zz";
    assertThatThrownBy(() -> EthPrivateKey.parse(secret)).hasMessageNotContaining("abab");
    assertThat(EthPrivateKey.parse(KEY_A).toString()).doesNotContain("0123456789");
  }

  @Test
  void toHex_shouldRoundTrip() {
    final EthPrivateKey key = EthPrivateKey.parse(KEY_B);
    assertThat(key.toHex()).isEqualTo(KEY_B);
    assertThat(EthPrivateKey.fromBytes(key.toBytes()).address()).isEqualTo(key.address());
    assertThat(new BigInteger(1, key.publicKey()).bitLength()).isGreaterThan(500);
  }
}
