// Prints one JSON document of reference values computed by the pinned JavaScript libraries
// (multiformats, @libp2p/crypto, @libp2p/peer-id, @multiformats/multiaddr) for deterministic
// inputs, for the Java conformance test JsReferenceValuesIT in module multiformats.
// Usage: node multiformats-values.mjs > values.json
import { createHash } from 'node:crypto'
import { CID, varint } from 'multiformats'
import { base16 } from 'multiformats/bases/base16'
import { base32 } from 'multiformats/bases/base32'
import { base36 } from 'multiformats/bases/base36'
import { base58btc } from 'multiformats/bases/base58'
import { base64, base64url } from 'multiformats/bases/base64'
import * as raw from 'multiformats/codecs/raw'
import { identity } from 'multiformats/hashes/identity'
import { sha256, sha512 } from 'multiformats/hashes/sha2'
import {
  generateKeyPair, generateKeyPairFromSeed, privateKeyFromProtobuf, publicKeyToProtobuf
} from '@libp2p/crypto/keys'
import { peerIdFromPublicKey, peerIdFromString } from '@libp2p/peer-id'
import { multiaddr } from '@multiformats/multiaddr'

const DAG_PB = 0x70
const DAG_CBOR = 0x71
const LIBP2P_KEY = 0x72

const hex = (bytes) => Buffer.from(bytes).toString('hex')
const fromHex = (text) => new Uint8Array(Buffer.from(text, 'hex'))

// Deterministic pseudo-random bytes: SHA-256 in counter mode over a label.
function bytesOf (label, length) {
  const out = new Uint8Array(length)
  for (let i = 0, block = 0; i < length; block++) {
    const digest = createHash('sha256').update(`${label}/${block}`).digest()
    for (let k = 0; k < digest.length && i < length; k++) out[i++] = digest[k]
  }
  return out
}

// --- varints -------------------------------------------------------------------------------
const varintValues = [0, 1, 2, 127, 128, 129, 255, 256, 300, 16383, 16384, 2 ** 21 - 1, 2 ** 21,
  2 ** 28 - 1, 2 ** 28, 2 ** 31 - 1, 2 ** 32, 2 ** 35 - 1, 2 ** 35, 2 ** 42, 2 ** 49 - 1,
  Number.MAX_SAFE_INTEGER]
const varints = varintValues.map((value) => {
  const target = new Uint8Array(varint.encodingLength(value))
  varint.encodeTo(value, target, 0)
  return { value: String(value), hex: hex(target) }
})

// --- multibase -----------------------------------------------------------------------------
const bases = { base16, base32, base36, base58btc, base64, base64url }
const inputs = []
for (const length of [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 31, 32, 33, 34, 36, 37, 64, 100, 255]) {
  inputs.push(bytesOf(`multibase-${length}`, length))
}
inputs.push(new Uint8Array([0]))
inputs.push(new Uint8Array([0, 0, 0]))
inputs.push(new Uint8Array([0, 0, 1, 2, 3]))
inputs.push(new Uint8Array([0, 0xff, 0, 0xff]))
inputs.push(new Uint8Array(40).fill(0xff))
inputs.push(Uint8Array.from([0, 0, ...bytesOf('zeros-then-random', 30)]))
const multibase = []
for (const input of inputs) {
  for (const [name, base] of Object.entries(bases)) {
    multibase.push({ base: name, inputHex: hex(input), text: base.encode(input) })
  }
}

// --- CIDs ----------------------------------------------------------------------------------
const cidInputs = [
  new Uint8Array(0),
  new TextEncoder().encode('hello world'),
  new TextEncoder().encode('relay-pinner'),
  bytesOf('cid-block-1', 100),
  bytesOf('cid-block-2', 1000),
  new Uint8Array([0, 1, 2, 3])
]
const cids = []
function addCid (cid, inputHex, hashName) {
  const entry = {
    inputHex,
    version: cid.version,
    codec: cid.code,
    hash: hashName,
    multihashHex: hex(cid.multihash.bytes),
    bytesHex: hex(cid.bytes),
    text: cid.toString()
  }
  if (cid.version === 1) {
    entry.base32 = cid.toString(base32)
    entry.base58btc = cid.toString(base58btc)
    entry.base36 = cid.toString(base36)
    entry.base64url = cid.toString(base64url)
    entry.base16 = cid.toString(base16)
  }
  cids.push(entry)
}
for (const input of cidInputs) {
  const h256 = await sha256.digest(input)
  const h512 = await sha512.digest(input)
  addCid(CID.createV0(h256), hex(input), 'sha2-256')
  for (const codec of [raw.code, DAG_PB, DAG_CBOR, LIBP2P_KEY, 0x0129]) {
    addCid(CID.createV1(codec, h256), hex(input), 'sha2-256')
  }
  addCid(CID.createV1(raw.code, h512), hex(input), 'sha2-512')
  if (input.length <= 64) {
    addCid(CID.createV1(raw.code, identity.digest(input)), hex(input), 'identity')
  }
}
// a CIDv0 converted to v1, as Helia does
const v0 = CID.createV0(await sha256.digest(new TextEncoder().encode('v0 to v1')))
const v0ToV1 = { v0: v0.toString(), v1: v0.toV1().toString() }

// --- PeerIds -------------------------------------------------------------------------------
const peerIds = []
async function addPeer (label, privateKey) {
  const peerId = peerIdFromPublicKey(privateKey.publicKey)
  const cid = peerId.toCID()
  peerIds.push({
    label,
    type: privateKey.type,
    publicKeyProtobufHex: hex(publicKeyToProtobuf(privateKey.publicKey)),
    base58: peerId.toString(),
    cidBase32: cid.toString(),
    cidBase36: cid.toString(base36),
    cidBase58btc: cid.toString(base58btc),
    multihashHex: hex(peerId.toMultihash().bytes),
    parsedFromBase36: peerIdFromString(cid.toString(base36), base36).toString()
  })
}
// @libp2p/peer-id 6 has no ECDSA PeerId (peerIdFromPublicKey throws), and @libp2p/crypto's
// ECDSAPublicKey.toMultihash() is an identity multihash even though the encoded key is longer
// than 42 bytes (the spec says sha2-256). Only the key bytes and that multihash are printed.
const ecdsaKeys = []
for (const fill of [0, 1, 7, 42, 0x5a, 0xff]) {
  const seed = new Uint8Array(32).fill(fill)
  await addPeer(`ed25519 seed ${fill}`, await generateKeyPairFromSeed('Ed25519', seed))
}
for (let i = 0; i < 3; i++) {
  await addPeer(`ed25519 seed sha256(${i})`,
    await generateKeyPairFromSeed('Ed25519', bytesOf(`ed25519-seed-${i}`, 32)))
}
for (const keyHex of [
  '0000000000000000000000000000000000000000000000000000000000000001',
  '0000000000000000000000000000000000000000000000000000000000000002',
  '53dadf1d5a164d6b4acdb15e24aa4c5b1d3461bdbd42abedb0a4404d56ced8fb',
  'fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140',
  hex(bytesOf('secp256k1-key', 32))
]) {
  const key = privateKeyFromProtobuf(Uint8Array.from([0x08, 0x02, 0x12, 0x20, ...fromHex(keyHex)]))
  await addPeer(`secp256k1 ${keyHex}`, key)
}
// ECDSA and RSA key generation cannot be seeded: these keys are random, but every value derived
// from one is printed with it, so the comparison is still exact.
for (const curve of ['P-256', 'P-384', 'P-521']) {
  const key = await generateKeyPair('ECDSA', curve)
  ecdsaKeys.push({
    label: `ecdsa ${curve} (random)`,
    publicKeyProtobufHex: hex(publicKeyToProtobuf(key.publicKey)),
    keyMultihashHex: hex(key.publicKey.toMultihash().bytes)
  })
}
await addPeer('rsa 2048 (random)', await generateKeyPair('RSA', 2048))

// --- multiaddrs ----------------------------------------------------------------------------
const ed = peerIds[0].base58
const ed2 = peerIds[1].base58
const secp = peerIds.find((p) => p.type === 'secp256k1').base58
const rsa = peerIds.find((p) => p.type === 'RSA').base58
const certhash1 = base64url.encode((await sha256.digest(new TextEncoder().encode('cert-1'))).bytes)
const certhash2 = base64url.encode((await sha256.digest(new TextEncoder().encode('cert-2'))).bytes)
const certhashB32 = base32.encode((await sha256.digest(new TextEncoder().encode('cert-3'))).bytes)
const certhash512 = base64url.encode((await sha512.digest(new TextEncoder().encode('cert-4'))).bytes)
const addressInputs = [
  '/',
  '/ip4/192.0.2.42/tcp/443',
  '/ip4/127.0.0.1/tcp/4001',
  '/ip4/0.0.0.0/tcp/0',
  '/ip4/255.255.255.255/udp/65535/quic-v1',
  '/ip4/10.0.0.1/udp/4001/quic',
  '/ip4/10.0.0.1/tcp/4001/noise',
  '/ip4/10.0.0.1/tcp/80/http',
  '/ip4/10.0.0.1/tcp/443/https',
  '/ip4/10.0.0.1/tcp/443/tls/http',
  '/ip4/10.0.0.1/tcp/8080/ws',
  '/ip4/10.0.0.1/tcp/443/wss',
  `/ip4/10.0.0.1/tcp/4001/p2p/${ed}`,
  `/ip4/10.0.0.1/tcp/4001/ipfs/${ed}`,
  `/ip4/10.0.0.1/tcp/4001/p2p/${secp}`,
  `/ip4/10.0.0.1/tcp/4001/p2p/${rsa}`,
  `/ip4/10.0.0.1/tcp/4001/p2p/${peerIds[0].cidBase32}`,
  `/ip4/10.0.0.1/tcp/4001/p2p/${peerIds[0].cidBase36}`,
  '/p2p/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N',
  '/p2p/bafzbeie5745rpv2m6tjyuugywy4d5ewrqgqqhfnf445he3omzpjbx5xqxe',
  `/dns4/relay.example/tcp/443/tls/sni/relay.example/ws/p2p/${ed}`,
  `/dns4/relay.example/tcp/443/wss/p2p/${ed}`,
  `/dns6/relay.example/tcp/443/wss/p2p/${ed}`,
  '/dns/example.com/tcp/443/tls/ws',
  '/dns/xn--bcher-kva.example/tcp/1',
  '/dns4/b\u00fccher.example/tcp/1',
  '/dnsaddr/bootstrap.libp2p.io/p2p/QmNnooDu7bfjPFoTZYxMNLWUQJyrVwtbZg5gBMjTezGAJN',
  `/ip4/10.0.0.1/tcp/4001/p2p/${ed}/p2p-circuit/p2p/${ed2}`,
  `/ip4/10.0.0.1/tcp/4001/p2p/${ed}/p2p-circuit/webrtc/p2p/${ed2}`,
  `/ip4/192.0.2.1/udp/9090/webrtc-direct/certhash/${certhash1}/p2p/${ed}`,
  `/ip4/192.0.2.1/udp/4001/quic-v1/webtransport/certhash/${certhash1}/certhash/${certhash2}/p2p/${ed}`,
  `/ip4/192.0.2.1/udp/4001/quic-v1/webtransport/certhash/${certhashB32}`,
  `/ip4/192.0.2.1/udp/4001/quic-v1/webtransport/certhash/${certhash512}`,
  '/ip6/::1/tcp/4001',
  '/ip6/::/tcp/1',
  '/ip6/0:0:0:0:0:0:0:1/tcp/1',
  '/ip6/2001:db8::1/udp/4001/quic-v1',
  '/ip6/2001:db8:0:0:1:0:0:1/tcp/1',
  '/ip6/2001:0db8:0000:0000:0000:0000:0000:0001/tcp/1',
  '/ip6/1:0:0:2:0:0:0:3/tcp/1',
  '/ip6/1:0:0:2:0:0:3:4/tcp/1',
  '/ip6/1:2:3:4:5:6:7:0/tcp/1',
  '/ip6/0:2:3:4:5:6:7:8/tcp/1',
  '/ip6/ABCD:EF01:2345:6789:ABCD:EF01:2345:6789/tcp/1',
  '/ip6/::ffff:192.0.2.1/tcp/1',
  '/ip6/64:ff9b::192.0.2.33/tcp/1',
  '/ip6/fe80::1/tcp/1',
  '/ip6zone/eth0/ip6/fe80::1/tcp/1',
  '/ip6/2604:1380:4602:5c00::3/tcp/443/tls/sni/example.com/ws'
]
const multiaddrs = addressInputs.map((input) => {
  const ma = multiaddr(input)
  const bytes = ma.bytes
  return {
    input,
    text: ma.toString(),
    canonical: multiaddr(bytes).toString(),
    bytesHex: hex(bytes),
    peerId: ma.getComponents().filter((c) => c.name === 'p2p').map((c) => c.value).pop() ?? null
  }
})

process.stdout.write(JSON.stringify({
  generator: 'interop/js/formats/multiformats-values.mjs',
  varints,
  multibase,
  cids,
  v0ToV1,
  peerIds,
  ecdsaKeys,
  multiaddrs
}, null, 1) + '\n')
