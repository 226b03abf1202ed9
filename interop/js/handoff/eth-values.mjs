// Reference values from ethers for the Java handoff tests (EthersInteropIT).
// Usage: node eth-values.mjs INPUT.json   (prints one JSON object on stdout)
// INPUT: { keys: [privateKeyHex], messages: [text], byteMessages: [hex],
//          verify: [{ message, bytes, signature }], addresses: [hex], numbers: [float64 bits hex],
//          strings: [text] }
// Texts are signed as UTF-8 (ethers signMessage(string)); byteMessages as raw bytes.
import { readFileSync } from 'node:fs'
import { Wallet, getAddress, getBytes, hashMessage, verifyMessage, SigningKey, Signature } from 'ethers'

const input = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const out = { keys: [], signatures: [], recovered: [], checksums: [], numbers: [], strings: [] }

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

process.stdout.write(JSON.stringify(out) + '\n')
