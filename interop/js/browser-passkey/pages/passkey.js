// Browser passkey test page (relay/.../BrowserPasskeyE2eIT): a WebAuthn (`webauthn`, key store
// mode) OrbitDB identity made by @le-space/orbitdb-identity-provider-webauthn-did 0.3.1 with the
// browser's own navigator.credentials (the test gives the page Chromium's virtual authenticator),
// writing through the relay only. Served from http://localhost:<port> (a secure context whose
// host is a valid rpId).
//
//   passkey.html?role=writer&relay=<multiaddr>&entries=N&assertions=K
//     Dials the relay, then waits for the test to call `go()` (after it added the virtual
//     authenticator). Creates the passkey with the provider (rpId = the page's host), makes the
//     provider's identity on it, opens a new `events` database (ipfs access controller naming the
//     identity's did:key) and adds N entries. Then K more assertions over random challenges, to
//     report what signatures the authenticator makes (DER, hex). Reports {event: 'written',
//     address, id, type, entries, signatures} and stays open until the test closes it.
//   passkey.html?role=reader&relay=<multiaddr>&address=<db address>&entries=N
//     Fresh stores; opens the database by address through the relay, waits for N entries and
//     reports {event: 'read', entries: [text...], writers: [identity id...], types: [...]}.
//
// Provider 0.3.1 derives the did:key from a synthetic key in browsers (its attestation parser
// ignores the authenticator data's byte offset; fixed in 0.4.0, see docs/identities.md), and the
// relay refuses such ids. The page gives the provider the real key instead, read from
// AuthenticatorAttestationResponse.getPublicKey(), as 0.4.0 does.
import { createOrbitDB, useIdentityProvider } from '@orbitdb/core'
import {
  OrbitDBWebAuthnIdentityProviderFunction,
  WebAuthnDIDProvider
} from '@le-space/orbitdb-identity-provider-webauthn-did'
import { fail, log, multiaddr, params, report, startPeer, status } from '../../browser/pages/lib/peer.js'

const role = params.get('role')
const relay = params.get('relay')
document.getElementById('role').textContent = role
const facts = (text) => { document.getElementById('facts').textContent += text + '\n' }
const hex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('')
const showEntry = (text) => {
  const li = document.createElement('li')
  li.textContent = text
  document.getElementById('entries').append(li)
}

useIdentityProvider(OrbitDBWebAuthnIdentityProviderFunction)

let go
const started = new Promise((resolve) => { go = resolve })
globalThis.go = () => { go(); return true }

/** The credential the provider creates, with the authenticator's real P-256 key. */
async function createPasskey () {
  const create = navigator.credentials.create.bind(navigator.credentials)
  let spki = null
  navigator.credentials.create = async (options) => {
    const credential = await create(options)
    spki = new Uint8Array(credential.response.getPublicKey())
    return credential
  }
  try {
    const created = await WebAuthnDIDProvider.createCredential({ userId: 'browser-writer', domain: location.hostname })
    // A P-256 SubjectPublicKeyInfo ends with the uncompressed point 04 ‖ x ‖ y.
    const point = spki.slice(spki.length - 65)
    if (point[0] !== 0x04) throw new Error('the passkey is not an uncompressed P-256 key')
    const synthetic = hex(created.publicKey.x) !== hex(point.slice(1, 33))
    log(`passkey ${created.credentialId}: provider's own key ${synthetic ? 'synthetic (0.3.1 parser)' : 'real'}`)
    return { ...created, publicKey: { algorithm: -7, keyType: 2, curve: 1, x: point.slice(1, 33), y: point.slice(33, 65) } }
  } finally {
    navigator.credentials.create = create
  }
}

async function writer ({ helia }) {
  const entries = Number(params.get('entries') ?? 10)
  const assertions = Number(params.get('assertions') ?? 0)
  status('waiting for the authenticator')
  await started
  status('creating the passkey')
  const credential = await createPasskey()
  const orbitdb = await createOrbitDB({
    ipfs: helia,
    identity: { provider: OrbitDBWebAuthnIdentityProviderFunction({ webauthnCredential: credential }) },
    directory: './orbitdb-passkey-writer'
  })
  facts(`identity ${orbitdb.identity.id} (${orbitdb.identity.type})`)
  const name = `browser-passkey-${hex(crypto.getRandomValues(new Uint8Array(4)))}`
  const db = await orbitdb.open(name, { type: 'events' })
  db.events.on('error', (err) => log(`db error ${err?.stack ?? err}`))
  facts(`database ${db.address}`)
  status(`writing ${entries} entries`)
  for (let i = 0; i < entries; i++) {
    const text = `passkey entry ${i + 1}`
    await db.add({ text })
    showEntry(text)
  }
  const signatures = []
  for (let i = 0; i < assertions; i++) {
    const assertion = await navigator.credentials.get({
      publicKey: {
        challenge: crypto.getRandomValues(new Uint8Array(32)),
        rpId: location.hostname,
        allowCredentials: [{ type: 'public-key', id: credential.rawCredentialId }],
        userVerification: 'required'
      }
    })
    signatures.push(hex(assertion.response.signature))
  }
  status(`wrote ${entries} entries as ${orbitdb.identity.id.slice(0, 24)}…`, 'done')
  report({ event: 'written', address: db.address.toString(), id: orbitdb.identity.id, type: orbitdb.identity.type, entries, signatures })
}

async function reader ({ helia }) {
  const address = params.get('address')
  const entries = Number(params.get('entries') ?? 10)
  const orbitdb = await createOrbitDB({ ipfs: helia, id: 'passkey-reader', directory: './orbitdb-passkey-reader' })
  status(`opening ${address}`)
  facts(`database ${address}`)
  const db = await orbitdb.open(address)
  db.events.on('error', (err) => log(`db error ${err?.stack ?? err}`))
  let all = await db.log.values()
  while (all.length < entries) {
    status(`waiting: ${all.length} of ${entries} entries`)
    await new Promise((resolve) => setTimeout(resolve, 250))
    all = await db.log.values()
  }
  const texts = (await db.all()).map((e) => e.value.text)
  texts.forEach(showEntry)
  const writers = new Set()
  const types = new Set()
  for (const entry of all) {
    const identity = await orbitdb.identities.getIdentity(entry.identity)
    writers.add(identity.id)
    types.add(identity.type)
  }
  facts(`writers ${[...writers].join(', ')}`)
  status(`read ${texts.length} entries`, 'done')
  report({ event: 'read', entries: texts, writers: [...writers], types: [...types] })
}

try {
  const peer = await startPeer()
  status(`dialling the relay ${relay}`)
  facts(`relay ${relay}`)
  const connection = await peer.libp2p.dial(multiaddr(relay))
  log(`connected to ${connection.remoteAddr}`)
  report({ event: 'connected', peerId: peer.libp2p.peerId.toString() })
  if (role === 'writer') await writer(peer)
  else if (role === 'reader') await reader(peer)
  else throw new Error(`unknown role ${role}`)
} catch (err) {
  fail(err)
}
