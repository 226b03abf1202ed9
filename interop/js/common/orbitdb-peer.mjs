// An OrbitDB peer for the Java orbitdb module's tests, shared by stack A (OrbitDB 3) and stack B
// (OrbitDB 4): run it with the stack's folder as the working directory
// (`cd interop/js/stack-b && node ../common/orbitdb-peer.mjs ...`), so ./deps.mjs picks that
// stack's packages. did:key identities come from ../did (its own npm project).
//
//   orbitdb-peer.mjs [--entries N] [--listen]
//
// Creates, on one Helia node with in-memory stores:
//   events-pk     events,    publickey identity, ipfs access controller (write = [creator id])
//   documents-pk  documents, publickey identity, ipfs access controller
//   keyvalue-pk   keyvalue,  publickey identity, ipfs access controller
//   events-did    events,    did:key (Ed25519) identity, ipfs access controller (write = [did])
//   keyvalue-oac  keyvalue,  publickey identity, orbitdb access controller (its own keyvalue
//                 database holds the write list)
//   events-open   events,    publickey identity, ipfs access controller with write = ['*']
// writes N entries (default 100) to each, and makes one entry for events-pk signed by an
// identity that the access controller does not list ("intruder"; never added to the log).
// Prints one JSON line {"event":"ready", ...} with every database's address, manifest and
// access-controller CIDs (and the orbitdb controller's own database, after one grant of 'write'
// to the did identity), the entries as the JS log iterates them (hash, payload, clock,
// identity, key), the heads, and every block of the Helia blockstore (CID -> base64 bytes).
// Without --listen it then exits; with --listen it listens on 127.0.0.1 TCP (its peer id and
// addresses are in the ready line) and keeps the databases open until stdin closes, printing
// {"event":"peer", ...} for connections; it then also takes commands on stdin (see below).
// Diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { heliaNode } from './helia-node.mjs'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const did = await import(new URL('../did/deps.mjs', import.meta.url).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
// The did provider 1.0.2 does not await its JWS check (see shared notes/js-interop.md §8).
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const args = process.argv.slice(2)
const arg = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : fallback
}
const entries = Number(arg('--entries', '100'))
const listen = args.includes('--listen')
const directory = mkdtempSync(join(tmpdir(), 'orbitdb-peer-'))

const { libp2p, helia } = await heliaNode(deps, {
  addresses: { listen: listen ? ['/ip4/127.0.0.1/tcp/0'] : [] },
  transports: [deps.tcp()],
  connectionEncrypters: [deps.noise()],
  streamMuxers: [deps.yamux()],
  services: {
    identify: deps.identify(),
    ping: deps.ping(),
    pubsub: deps.gossipsub({ allowPublishToZeroTopicPeers: true })
  }
}, { blockstore: new deps.MemoryBlockstore(), datastore: new deps.MemoryDatastore() })

did.OrbitDBIdentityProviderDID.setDIDResolver(did.KeyDidResolver.getResolver())
deps.useIdentityProvider(did.OrbitDBIdentityProviderDID)

const orbitdb = await deps.createOrbitDB({ ipfs: helia, id: 'writer', directory: join(directory, 'pk') })
const didIdentities = await deps.Identities({ ipfs: helia, path: join(directory, 'did-keys') })
const seed = new Uint8Array(32).fill(stackSeed())
const didOrbit = await deps.createOrbitDB({
  ipfs: helia,
  identities: didIdentities,
  identity: { provider: did.OrbitDBIdentityProviderDID({ didProvider: new did.Ed25519Provider(seed) }) },
  directory: join(directory, 'did')
})

function stackSeed () {
  return { A: 0x0a, B: 0x0b, C: 0x0c }[deps.stack]
}

const specs = [
  { name: 'events-pk', type: 'events', node: orbitdb, identityType: 'publickey' },
  { name: 'documents-pk', type: 'documents', node: orbitdb, identityType: 'publickey' },
  { name: 'keyvalue-pk', type: 'keyvalue', node: orbitdb, identityType: 'publickey' },
  { name: 'events-did', type: 'events', node: didOrbit, identityType: 'did' },
  {
    name: 'keyvalue-oac',
    type: 'keyvalue',
    node: orbitdb,
    identityType: 'publickey',
    AccessController: deps.OrbitDBAccessController({ write: [orbitdb.identity.id] })
  },
  {
    name: 'events-open',
    type: 'events',
    node: orbitdb,
    identityType: 'publickey',
    AccessController: deps.IPFSAccessController({ write: ['*'] })
  }
]

const dbs = []
for (const spec of specs) {
  const options = { type: spec.type }
  if (spec.AccessController) options.AccessController = spec.AccessController
  const db = await spec.node.open(`${spec.name}-${deps.stack}`, options)
  for (let i = 0; i < entries; i++) {
    const value = { i, text: `${spec.name} entry ${i}`, imageCid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy' }
    if (spec.type === 'events') await db.add(value)
    else if (spec.type === 'documents') await db.put({ _id: `doc-${i}`, ...value })
    else await db.put(`key-${i}`, value)
  }
  dbs.push({ spec, db })
}

// The orbitdb access controller's keyvalue database gets one PUT: write = [did identity id].
await dbs[4].db.access.grant('write', didOrbit.identity.id)

// An entry for events-pk by an identity its access controller does not list, made with OrbitDB's
// own Entry.create on top of the current heads (never appended or published).
const intruderIdentity = await orbitdb.identities.createIdentity({ id: 'intruder' })
const eventsPk = dbs[0].db
const headsNow = await eventsPk.log.heads()
const maxTime = Math.max(...headsNow.map((h) => h.clock.time))
const intruderEntry = await deps.Entry.create(intruderIdentity, eventsPk.address.toString(),
  { op: 'ADD', key: null, value: { intruder: true } }, null,
  { id: intruderIdentity.publicKey, time: maxTime + 1 }, headsNow.map((h) => h.hash), [])
const intruderBlock = await deps.Entry.encode(intruderEntry)

const describe = async ({ spec, db }) => {
  const list = []
  for await (const e of db.log.iterator()) {
    list.push({ hash: e.hash, payload: e.payload, clock: e.clock, identity: e.identity, key: e.key, next: e.next, refs: e.refs })
  }
  list.reverse() // oldest first
  const heads = (await db.log.heads()).map((h) => h.hash)
  return {
    name: spec.name,
    type: spec.type,
    identityType: spec.identityType,
    identityId: spec.node.identity.id,
    identityHash: spec.node.identity.hash,
    address: db.address.toString(),
    accessController: db.access.address,
    accessControllerType: db.access.type,
    entries: list,
    heads
  }
}

const described = []
for (const d of dbs) described.push(await describe(d))
// The orbitdb access controller's own database (keyvalue).
const oac = dbs[4].db.access
if (oac.type === 'orbitdb' && oac.address) {
  described.push({ ...(await describeAcDb(oac)), name: 'keyvalue-oac/access' })
}

async function describeAcDb (ac) {
  // The AC database is not exposed; re-open it by address on the same node (OrbitDB returns the
  // open instance).
  const acDb = await orbitdb.open(ac.address)
  return describe({ spec: { name: 'access', type: 'keyvalue', node: orbitdb, identityType: 'publickey' }, db: acDb })
}

const blocks = {}
for await (const pair of helia.blockstore.getAll()) {
  // Helia 5 pairs are { cid, block }; Helia 6 pairs are { cid, bytes } where bytes may be an
  // async iterable of chunks.
  let bytes = pair.bytes ?? pair.block
  if (bytes != null && typeof bytes[Symbol.asyncIterator] === 'function') {
    const chunks = []
    for await (const chunk of bytes) chunks.push(chunk)
    bytes = Buffer.concat(chunks)
  }
  blocks[pair.cid.toString()] = Buffer.from(bytes).toString('base64')
}

out({
  event: 'ready',
  stack: deps.stack,
  peerId: libp2p.peerId.toString(),
  addrs: libp2p.getMultiaddrs().map(String),
  entriesPerDb: entries,
  dbs: described,
  intruder: {
    db: eventsPk.address.toString(),
    identityId: intruderIdentity.id,
    identityHash: intruderIdentity.hash,
    hash: intruderBlock.hash,
    block: Buffer.from(intruderBlock.bytes).toString('base64')
  },
  blocks
})

const stop = async () => {
  try {
    await orbitdb.stop()
    await didOrbit.stop()
    await helia.stop()
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}

if (listen) {
  libp2p.addEventListener('peer:connect', (evt) => out({ event: 'peer', peerId: evt.detail.toString() }))
  const byName = new Map(dbs.map(({ spec, db }) => [spec.name, db]))
  for (const { spec, db } of dbs) {
    db.events.on('error', (err) => console.error(`${spec.name}: ${err?.stack ?? err}`))
  }
  const { createInterface } = await import('node:readline')
  const lines = createInterface({ input: process.stdin })
  // Commands, one per line:
  //   write <db name> <count>     add <count> more entries (published on pubsub by OrbitDB)
  //   publish <topic> <base64>    publish raw bytes on a topic (crafted entries for the peer)
  //   put-block <base64>          store a dag-cbor block (e.g. another writer's identity)
  //   count <db name>             print {"event":"count", entries, heads} as OrbitDB sees them
  lines.on('line', async (line) => {
    const [cmd, a, b] = line.trim().split(/\s+/)
    try {
      if (cmd === 'write') {
        const db = byName.get(a)
        const hashes = []
        for (let i = 0; i < Number(b); i++) {
          const value = { i: 1000 + i, text: `${a} live entry ${i}` }
          let hash
          if (db.type === 'events') hash = await db.add(value)
          else if (db.type === 'documents') hash = await db.put({ _id: `live-${i}`, ...value })
          else hash = await db.put(`live-${i}`, value)
          hashes.push(hash)
        }
        out({ event: 'written', db: a, hashes })
      } else if (cmd === 'put-block') {
        const bytes = Buffer.from(a, 'base64')
        const cid = deps.CID.createV1(0x71, await deps.sha256.digest(bytes))
        await helia.blockstore.put(cid, bytes)
        out({ event: 'stored', cid: cid.toString() })
      } else if (cmd === 'count') {
        const db = byName.get(a)
        const all = await db.all()
        const heads = (await db.log.heads()).map((h) => h.hash)
        out({ event: 'count', db: a, entries: all.length, heads })
      } else if (cmd === 'publish') {
        await libp2p.services.pubsub.publish(a, Buffer.from(b, 'base64'))
        out({ event: 'published', topic: a })
      }
    } catch (err) {
      out({ event: 'error', command: cmd, message: String(err) })
    }
  })
  lines.on('close', async () => {
    await stop()
    process.exit(0)
  })
} else {
  await stop()
  process.exit(0)
}
