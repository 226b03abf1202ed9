// Reference values from ethers for the Java handoff tests (EthersInteropIT).
// Usage: node eth-values.mjs INPUT.json   (prints one JSON object on stdout)
// INPUT: { keys: [privateKeyHex], messages: [text], byteMessages: [hex],
//          verify: [{ message, bytes, signature }], addresses: [hex], numbers: [float64 bits hex],
//          strings: [text], alephMessages: [{ key, type, content, channel, time }],
//          verifyAleph: [envelope] }
// alephMessages are built the way the public deployer's core library does: item_content is
// JSON.stringify({ address, ...content, time }), item_hash its SHA-256, and the signature
// personal_sign of "ETH\n<sender>\n<type>\n<item_hash>".
// Texts are signed as UTF-8 (ethers signMessage(string)); byteMessages as raw bytes.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Wallet, getAddress, getBytes, hashMessage, verifyMessage, SigningKey, Signature } from 'ethers'

const input = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const out = {
  keys: [], signatures: [], recovered: [], checksums: [], numbers: [], strings: [],
  alephMessages: [], alephVerified: []
}

for (const key of input.keys ?? []) {
  const wallet = new Wallet(key)
  out.keys.push({
    privateKey: key,
    address: wallet.address,
    publicKey: SigningKey.computePublicKey(key, false)
  })
  for (const message of input.messages ?? []) {
    out.signatures.push({
      key, message, bytes: false,
      hash: hashMessage(message),
      signature: wallet.signMessageSync(message)
    })
  }
  for (const hex of input.byteMessages ?? []) {
    const bytes = getBytes(hex)
    out.signatures.push({
      key, message: hex, bytes: true,
      hash: hashMessage(bytes),
      signature: wallet.signMessageSync(bytes)
    })
  }
}

for (const { message, bytes, signature } of input.verify ?? []) {
  let address = null
  let canonical = null
  try {
    address = verifyMessage(bytes ? getBytes(message) : message, signature)
    canonical = Signature.from(signature).serialized
  } catch (e) {
    address = null
  }
  out.recovered.push({ message, bytes, signature, address, canonical })
}

for (const address of input.addresses ?? []) {
  out.checksums.push(getAddress(address))
}

const view = new DataView(new ArrayBuffer(8))
for (const bits of input.numbers ?? []) {
  view.setBigUint64(0, BigInt('0x' + bits))
  out.numbers.push(String(view.getFloat64(0)))
}

for (const text of input.strings ?? []) {
  out.strings.push(JSON.stringify(text))
}

const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest('hex')

for (const { key, type, content, channel, time } of input.alephMessages ?? []) {
  const wallet = new Wallet(key)
  const itemContent = JSON.stringify({ address: wallet.address, ...content, time })
  const itemHash = sha256(itemContent)
  out.alephMessages.push({
    sender: wallet.address,
    chain: 'ETH',
    type,
    item_type: 'inline',
    item_content: itemContent,
    item_hash: itemHash,
    time,
    channel,
    signature: wallet.signMessageSync(['ETH', wallet.address, type, itemHash].join('\n'))
  })
}

for (const message of input.verifyAleph ?? []) {
  let signer = null
  try {
    signer = verifyMessage(
      [message.chain, message.sender, message.type, message.item_hash].join('\n'),
      message.signature)
  } catch (e) {
    signer = null
  }
  out.alephVerified.push({
    hashOk: sha256(message.item_content) === message.item_hash,
    signer,
    content: JSON.parse(message.item_content)
  })
}

process.stdout.write(JSON.stringify(out) + '\n')
