// Reference values from js-libp2p's key library (@libp2p/crypto, @libp2p/peer-id) for the Java
// crypto conformance test (libp2p module, KeysJsInteropIT).
//   node crypto-values.mjs               -> JSON on stdout: keys, PeerIds and signatures made by JS
//   node crypto-values.mjs verify FILE   -> JSON on stdout: JS's verdict on signatures made by Java
import { readFileSync } from 'node:fs'
import {
  generateKeyPairFromSeed, privateKeyFromRaw, privateKeyToProtobuf, publicKeyToProtobuf,
  publicKeyFromProtobuf, privateKeyFromProtobuf
} from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'

const hex = (bytes) => Buffer.from(bytes).toString('hex')
const unhex = (text) => new Uint8Array(Buffer.from(text, 'hex'))
const messages = ['', 'hello world', 'noise-libp2p-static-key:' + 'ab'.repeat(32), 'x'.repeat(1000)]

async function describe (key) {
  const peerId = peerIdFromPrivateKey(key)
  const signatures = []
  for (const message of messages) {
    const data = new TextEncoder().encode(message)
    signatures.push({ message: hex(data), signature: hex(await key.sign(data)) })
  }
  return {
    type: key.type,
    privateProtobuf: hex(privateKeyToProtobuf(key)),
    publicProtobuf: hex(publicKeyToProtobuf(key.publicKey)),
    peerId: peerId.toString(),
    peerIdCid: peerId.toCID().toString(),
    signatures
  }
}

async function values () {
  const keys = []
  for (const fill of [0x00, 0x01, 0x07, 0x2a, 0xff]) {
    keys.push(await describe(await generateKeyPairFromSeed('Ed25519', new Uint8Array(32).fill(fill))))
  }
  for (const fill of [0x01, 0x07, 0x2a, 0x7f]) {
    keys.push(await describe(privateKeyFromRaw(new Uint8Array(32).fill(fill))))
  }
  return { keys }
}

async function verify (file) {
  const input = JSON.parse(readFileSync(file, 'utf8'))
  const results = []
  for (const item of input.items) {
    const publicKey = publicKeyFromProtobuf(unhex(item.publicProtobuf))
    let ok
    try {
      ok = await publicKey.verify(unhex(item.message), unhex(item.signature))
    } catch {
      ok = false
    }
    const result = { ok }
    if (item.privateProtobuf) {
      const key = privateKeyFromProtobuf(unhex(item.privateProtobuf))
      result.peerId = peerIdFromPrivateKey(key).toString()
    }
    results.push(result)
  }
  return { results }
}

const output = process.argv[2] === 'verify' ? await verify(process.argv[3]) : await values()
process.stdout.write(JSON.stringify(output, null, 1) + '\n')
