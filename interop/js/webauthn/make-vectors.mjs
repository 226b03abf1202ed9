// Test vectors for the relay's passkey identity verifiers (orbitdb module, identity/webauthn),
// made by the real npm provider @le-space/orbitdb-identity-provider-webauthn-did 0.3.1 and
// @orbitdb/core 4.0.0 in Node 22 behind a software authenticator (./soft-authenticator.mjs).
//
//   node make-vectors.mjs OUT.json
//
// Writes one JSON document: the relying party the authenticator served (origin, rpId) and, per
// case, the identity block and a few entry blocks (base64), their CIDs, the log id and what the
// provider reported. Cases:
//   webauthn            keystore mode: P-256 passkey did:key id, secp256k1 keystore signing key,
//                       the passkey proof in signatures.publicKey (base64url JSON); entries signed
//                       by the keystore key. Made by OrbitDBWebAuthnIdentityProviderFunction.
//   webauthn-varsig-p256, webauthn-varsig-ed25519
//                       varsig mode: every signature (id, publicKey, each entry) is a passkey
//                       assertion in a varsig v1 envelope, challenge SHA-256(label || payload)
//                       (the 0.3.1 format). Made by createWebAuthnVarsigIdentity.
//   webauthn-varsig-multihash-p256
//                       the same identity shape with the challenge format of the provider's
//                       0.5.x line (not installable here): challenge = 0x12 0x20 || SHA-256(
//                       varint(len(label)) || label || payload). Made with 0.3.1's own
//                       WebAuthnVarsigProvider parts and that framing (see makeMultihashVarsig).
//   webauthn-synthetic-key (valid: false)
//                       what 0.3.1 itself makes in browsers and here: its attestation parser falls
//                       back to a synthetic key, so the did:key names no key that signed anything.
//   worker-ed25519      a raw Ed25519 key (the apps' Web Worker keystore) signing utf8(id), then
//                       publicKey || signatures.id; id = did:key of that key; entries signed by
//                       the same key. The shape of the apps' createWorkerEd25519Identity (not
//                       part of the npm package).
// Each identity is checked with the provider's own verifier before it is written.
import { writeFileSync } from 'node:fs'
import { webcrypto } from 'node:crypto'
import { SoftAuthenticator, b64url } from './soft-authenticator.mjs'

const ORIGIN = 'https://app.example.test'
const RP_ID = 'app.example.test'
const out = process.argv[2]
if (!out) throw new Error('usage: make-vectors.mjs OUT.json')

const auth = new SoftAuthenticator({ origin: ORIGIN }).install()
const provider = await import('@le-space/orbitdb-identity-provider-webauthn-did')
const orbit = await import('@orbitdb/core')
const dagCbor = await import('@ipld/dag-cbor')
const Block = await import('multiformats/block')
const { sha256 } = await import('multiformats/hashes/sha2')
const { base58btc } = await import('multiformats/bases/base58')
const { varint } = await import('multiformats')
const { DEFAULT_DOMAIN_LABELS } = provider
const enc = new TextEncoder()
// The provider prints every WebAuthn response with console.group/log: keep stdout quiet.
console.log = () => {}
console.group = () => {}
console.groupEnd = () => {}

const b64 = (bytes) => Buffer.from(bytes).toString('base64')
const LOG_ID = '/orbitdb/zdpuAkstgbTVGHQmMi5TC84auhJ8rL5qoC8jfk4yi5yzTGHaS'

async function entries (identity, count) {
  const list = []
  let next = []
  for (let i = 0; i < count; i++) {
    const entry = await orbit.Entry.create(identity, LOG_ID, { op: 'ADD', key: null, value: `passkey entry ${i}` },
      null, { id: identity.publicKey, time: i + 1 }, next, [])
    const block = await orbit.Entry.encode(entry)
    list.push({ cid: block.hash, block: b64(block.bytes) })
    next = [block.hash]
  }
  return list
}

const cases = []

// --- webauthn (keystore mode) -------------------------------------------------------------------
// 0.3.1 reads the credential key from the attestation through authData.buffer without its
// byteOffset (cbor-web returns views), so in browsers as here it always falls back to a synthetic
// key SHA-256(credentialId) (fixed upstream in 0.4.0, "extract the real public key"). An identity
// on that key binds its did:key to no key that signs: it is written as a case to refuse. The valid
// case gives the provider the authenticator's real key, as 0.4.0+ reads it (getPublicKey()).
async function webauthnIdentity (credential) {
  orbit.useIdentityProvider(provider.OrbitDBWebAuthnIdentityProviderFunction)
  const identities = await orbit.Identities({ keystore: await orbit.KeyStore({ storage: await orbit.MemoryStorage() }) })
  const identity = await identities.createIdentity({
    provider: provider.OrbitDBWebAuthnIdentityProviderFunction({ webauthnCredential: credential })
  })
  if (!(await identities.verifyIdentity(identity))) throw new Error('webauthn identity does not verify in JS')
  return identity
}
{
  auth.algorithm = 'P-256'
  const warn = console.warn
  console.warn = () => {}
  const credential = await provider.WebAuthnDIDProvider.createCredential({ userId: 'alice', displayName: 'Alice', domain: RP_ID })
  console.warn = warn
  const raw = auth.publicKey()
  const synthetic = Buffer.compare(Buffer.from(credential.publicKey.x), Buffer.from(raw.subarray(1, 33))) !== 0
  if (synthetic) {
    const identity = await webauthnIdentity(credential)
    cases.push({
      name: 'webauthn-synthetic-key',
      type: identity.type,
      id: identity.id,
      valid: false,
      why: 'did:key of the synthetic fallback key, not of the authenticator key that signed the proof',
      identity: { cid: identity.hash, block: b64(identity.bytes) },
      entries: await entries(identity, 1)
    })
  }
  const real = { ...credential, publicKey: { algorithm: -7, keyType: 2, curve: 1, x: raw.slice(1, 33), y: raw.slice(33, 65) } }
  const identity = await webauthnIdentity(real)
  cases.push({
    name: 'webauthn',
    type: identity.type,
    id: identity.id,
    valid: true,
    credentialId: credential.credentialId,
    identity: { cid: identity.hash, block: b64(identity.bytes) },
    entries: await entries(identity, 3)
  })
}

// --- webauthn-varsig (0.3.1 challenge) ----------------------------------------------------------
for (const algorithm of ['P-256', 'Ed25519']) {
  auth.algorithm = algorithm
  const credential = await provider.WebAuthnVarsigProvider.createCredential({
    userId: `varsig-${algorithm}`, domain: RP_ID, forceP256: algorithm === 'P-256'
  })
  if (credential.algorithm !== algorithm) throw new Error(`asked for ${algorithm}, got ${credential.algorithm}`)
  const identity = await provider.createWebAuthnVarsigIdentity({ credential, userVerification: 'required' })
  if (!(await provider.verifyVarsigIdentity(identity))) throw new Error(`varsig ${algorithm} identity does not verify in JS`)
  const list = await entries(identity, 3)
  const ids = provider.createWebAuthnVarsigIdentities(identity)
  for (const e of list) {
    const decoded = await orbit.Entry.decode(Buffer.from(e.block, 'base64'))
    if (!(await orbit.Entry.verify(ids, decoded))) throw new Error('varsig entry does not verify in JS')
  }
  cases.push({
    name: `webauthn-varsig-${algorithm === 'P-256' ? 'p256' : 'ed25519'}`,
    type: identity.type,
    valid: true,
    id: identity.id,
    challenge: 'sha256-label-payload',
    identity: { cid: identity.hash, block: b64(identity.bytes) },
    entries: list
  })
}

// --- webauthn-varsig with the 0.5.x challenge (multihash of the length-framed payload) ----------
{
  auth.algorithm = 'P-256'
  const credential = await provider.WebAuthnVarsigProvider.createCredential({ userId: 'varsig-mh', domain: RP_ID, forceP256: true })
  const { encodeWebAuthnVarsigV1 } = await import('iso-webauthn-varsig')
  const bind = (label, payload) => {
    const l = enc.encode(label)
    return Uint8Array.from([...varint.encodeTo(l.length, new Uint8Array(varint.encodingLength(l.length))), ...l, ...payload])
  }
  const sign = async (payload, label) => {
    const digest = new Uint8Array(await webcrypto.subtle.digest('SHA-256', bind(label, payload)))
    const challenge = Uint8Array.from([0x12, 0x20, ...digest])
    const assertion = await navigator.credentials.get({
      publicKey: { challenge, rpId: RP_ID, userVerification: 'required', allowCredentials: [{ id: credential.credentialId, type: 'public-key' }] }
    })
    return encodeWebAuthnVarsigV1({
      authenticatorData: new Uint8Array(assertion.response.authenticatorData),
      clientDataJSON: new Uint8Array(assertion.response.clientDataJSON),
      signature: new Uint8Array(assertion.response.signature)
    }, 'P-256')
  }
  const id = credential.did
  const idSignature = await sign(enc.encode(id), DEFAULT_DOMAIN_LABELS.id)
  const publicKeySignature = await sign(Uint8Array.from([...credential.publicKey, ...idSignature]), DEFAULT_DOMAIN_LABELS.publicKey)
  const value = { id, publicKey: credential.publicKey, signatures: { id: idSignature, publicKey: publicKeySignature }, type: 'webauthn-varsig' }
  const block = await Block.encode({ value, codec: dagCbor, hasher: sha256 })
  const identity = {
    ...value,
    hash: block.cid.toString(base58btc),
    bytes: block.bytes,
    sign: (_, data) => sign(data, DEFAULT_DOMAIN_LABELS.entry)
  }
  cases.push({
    name: 'webauthn-varsig-multihash-p256',
    type: identity.type,
    valid: true,
    id,
    challenge: 'multihash-framed-payload',
    identity: { cid: identity.hash, block: b64(identity.bytes) },
    entries: await entries(identity, 2)
  })
}

// --- worker-ed25519 -----------------------------------------------------------------------------
{
  const pair = await webcrypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])
  const publicKey = new Uint8Array(await webcrypto.subtle.exportKey('raw', pair.publicKey))
  const sign = async (data) => new Uint8Array(await webcrypto.subtle.sign({ name: 'Ed25519' }, pair.privateKey, data))
  const prefix = varint.encodeTo(0xed, new Uint8Array(varint.encodingLength(0xed)))
  const id = `did:key:${base58btc.encode(Uint8Array.from([...prefix, ...publicKey]))}`
  const idSignature = await sign(enc.encode(id))
  const publicKeySignature = await sign(Uint8Array.from([...publicKey, ...idSignature]))
  const value = { id, publicKey, signatures: { id: idSignature, publicKey: publicKeySignature }, type: 'worker-ed25519' }
  const block = await Block.encode({ value, codec: dagCbor, hasher: sha256 })
  const identity = { ...value, hash: block.cid.toString(base58btc), bytes: block.bytes, sign: (_, data) => sign(data) }
  cases.push({
    name: 'worker-ed25519',
    type: identity.type,
    valid: true,
    id,
    identity: { cid: identity.hash, block: b64(identity.bytes) },
    entries: await entries(identity, 2)
  })
}

writeFileSync(out, JSON.stringify({
  generator: 'interop/js/webauthn/make-vectors.mjs',
  provider: '@le-space/orbitdb-identity-provider-webauthn-did@0.3.1',
  orbitdb: '@orbitdb/core@4.0.0',
  origin: ORIGIN,
  rpId: RP_ID,
  logId: LOG_ID,
  cases
}, null, 2) + '\n')
process.stderr.write(`wrote ${cases.length} cases to ${out}\n`)
process.exit(0)
