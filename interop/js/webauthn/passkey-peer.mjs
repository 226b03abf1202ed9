// A passkey writer and a fresh reader for the relay's passkey interop test
// (relay: RelayPasskeyJsInteropIT). Runs on stacks B and C (OrbitDB 4): start it with
// interop/js/stack-b or stack-c as the working directory (the stack's deps.mjs), the passkey
// provider comes from this folder.
//
//   passkey-peer.mjs writer --dial <relay> [--entries N] [--varsig]
//     A software authenticator (./soft-authenticator.mjs, origin https://app.example.test) makes
//     a P-256 passkey; the provider (0.3.1) builds a `webauthn` identity on it, with the key read
//     as the provider reads it from 0.4.0 on (0.3.1's own parser falls back to a synthetic key,
//     see make-vectors.mjs); an `events` database (ipfs access controller listing the did:key)
//     gets N entries. With --varsig the identity is `webauthn-varsig` instead (Ed25519 passkey;
//     every entry is a passkey assertion; OrbitDB runs on the provider's varsig identities).
//     Prints {"event":"ready", address, id, type, entries} and waits; stdin closing stops it.
//   passkey-peer.mjs reader --dial <relay> --open <address> --count N [--varsig]
//     Fresh stores; opens the database by address, waits for N entries and prints
//     {"event":"done", entries, writers: [identity ids]}. With --varsig its identities are
//     wrapped with the provider's varsig verification (which checks against this page's origin,
//     the software authenticator's).
// Diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { SoftAuthenticator } from './soft-authenticator.mjs'
import { heliaNode } from '../common/helia-node.mjs'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const args = process.argv.slice(2)
const role = args[0]
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i < 0 ? fallback : args[i + 1]
}
const directory = mkdtempSync(join(tmpdir(), `passkey-${role}-`))

const auth = new SoftAuthenticator({ origin: 'https://app.example.test' }).install()
const provider = await import('@le-space/orbitdb-identity-provider-webauthn-did')
// The provider prints every WebAuthn response to the console: keep stdout for events.
console.log = () => {}
console.group = () => {}
console.groupEnd = () => {}
deps.useIdentityProvider(provider.OrbitDBWebAuthnIdentityProviderFunction)

const { libp2p, helia } = await heliaNode(deps, {
  addresses: { listen: [] },
  transports: [deps.tcp()],
  connectionEncrypters: [deps.noise()],
  streamMuxers: [deps.yamux()],
  services: {
    identify: deps.identify(),
    ping: deps.ping(),
    pubsub: deps.gossipsub({ allowPublishToZeroTopicPeers: true })
  }
}, { blockstore: new deps.MemoryBlockstore(), datastore: new deps.MemoryDatastore() })

let orbitdb
let stopping = false
const stop = async (code = 0) => {
  if (stopping) return
  stopping = true
  try {
    if (orbitdb) await orbitdb.stop()
    await helia.stop()
  } catch (err) {
    console.error('stop', err)
  } finally {
    rmSync(directory, { recursive: true, force: true })
    process.exit(code)
  }
}
process.stdin.on('end', () => stop(0))
process.stdin.resume()

await libp2p.dial(deps.multiaddr(option('--dial')))

try {
  if (role === 'writer') await writer()
  else if (role === 'reader') await reader()
  else throw new Error(`unknown role ${role}`)
} catch (err) {
  console.error(err)
  out({ event: 'error', message: String(err && err.message ? err.message : err) })
}

async function writer () {
  const entries = Number(option('--entries', '20'))
  if (args.includes('--varsig')) return varsigWriter(entries)
  const warn = console.warn
  console.warn = () => {}
  const created = await provider.WebAuthnDIDProvider.createCredential({ userId: 'writer', domain: 'app.example.test' })
  console.warn = warn
  const raw = auth.publicKey()
  const credential = { ...created, publicKey: { algorithm: -7, keyType: 2, curve: 1, x: raw.slice(1, 33), y: raw.slice(33, 65) } }
  const identities = await deps.Identities({ ipfs: helia, path: join(directory, 'keys') })
  orbitdb = await deps.createOrbitDB({
    ipfs: helia,
    identities,
    identity: { provider: provider.OrbitDBWebAuthnIdentityProviderFunction({ webauthnCredential: credential }) },
    directory: join(directory, 'orbitdb')
  })
  const db = await orbitdb.open(`passkey-events-${Date.now()}`, { type: 'events' })
  db.events.on('error', (err) => console.error(`${db.name}: ${err?.stack ?? err}`))
  for (let i = 0; i < entries; i++) await db.add({ text: `passkey entry ${i}` })
  out({ event: 'ready', address: db.address.toString(), id: orbitdb.identity.id, type: orbitdb.identity.type, entries })
}

async function varsigWriter (entries) {
  // Ed25519: 0.3.1 checks each P-256 assertion it makes with iso-passkeys' unwrapEC2Signature,
  // which does not left-pad a 31-byte r or s, so about 1 in 128 P-256 signatures fails its own
  // check and the write throws (the relay verifies those; see docs/identities.md).
  auth.algorithm = 'Ed25519'
  const credential = await provider.WebAuthnVarsigProvider.createCredential({ userId: 'writer', domain: 'app.example.test' })
  const identity = await provider.createWebAuthnVarsigIdentity({ credential, userVerification: 'required' })
  const identities = provider.createWebAuthnVarsigIdentities(identity, {}, provider.createIpfsIdentityStorage(helia))
  orbitdb = await deps.createOrbitDB({ ipfs: helia, identities, identity, directory: join(directory, 'orbitdb') })
  const db = await orbitdb.open(`passkey-varsig-events-${Date.now()}`, { type: 'events' })
  db.events.on('error', (err) => console.error(`${db.name}: ${err?.stack ?? err}`))
  for (let i = 0; i < entries; i++) await db.add({ text: `passkey entry ${i}` })
  out({ event: 'ready', address: db.address.toString(), id: identity.id, type: identity.type, entries })
}

async function reader () {
  const count = Number(option('--count'))
  const identities = args.includes('--varsig')
    ? provider.wrapWithVarsigVerification(await deps.Identities({ ipfs: helia, path: join(directory, 'keys') }), helia)
    : undefined
  orbitdb = await deps.createOrbitDB({ ipfs: helia, id: 'reader', identities, directory: join(directory, 'orbitdb') })
  const db = await orbitdb.open(option('--open'))
  db.events.on('error', (err) => console.error(`reader: ${err?.stack ?? err}`))
  let all = await db.log.values()
  while (all.length < count) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    all = await db.log.values()
  }
  const writers = new Set()
  for (const entry of all) writers.add((await orbitdb.identities.getIdentity(entry.identity)).id)
  out({ event: 'done', entries: all.length, writers: [...writers] })
}
