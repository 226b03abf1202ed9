// Alice and Bob of the relay's replication scenario (notes/orbitdb-wire.md §1), shared by stack A
// (OrbitDB 3) and stack B (OrbitDB 4): run it with the stack's folder as the working directory.
// The peer dials only the relay; it listens nowhere unless given --listen.
//
//   replication-peer.mjs alice --dial <relay> [--files N] [--file-size BYTES] [--entries M] [--did]
//     Adds N files of random bytes with @helia/unixfs (256 KiB chunks, raw leaves, CIDv1), opens
//     an `events` and a `documents` database (publickey identity; with --did one `events`
//     database with a did:key identity instead of both), writes M entries in all (split over the
//     databases, each `{ text, imageCid }` naming file i % N), then, once a peer subscribed to
//     every database topic (at most 30 s), publishes on each: random garbage bytes and an entry
//     by an identity the access controller does not list ("intruder"). Prints {"event":"writing", dbs, files} before the first write and
//     {"event":"ready", dbs: [{address, type, entries}], files:
//     [{cid, sha256, bytes}], intruder} and waits; stdin closing stops it. While it waits, the
//     stdin line `write <count>` adds <count> more entries to the first database and prints
//     {"event":"written", address, entries} (the first database's entries in all); the line
//     `dial <multiaddr>` dials another relay and prints {"event":"dialled", address}.
//   replication-peer.mjs bob --dial <relay> --open <address>=<type>=<count>[,...] --cat <cid>[,...]
//     Fresh stores; opens each database by address, waits until it holds <count> entries
//     (events: entries, documents: documents), cats each file, and prints {"event":"done", dbs:
//     [{address, entries, intruder}], files: [{cid, sha256, bytes}], ms}.
//   replication-peer.mjs honest [--dial <relay>]
//     The honest user of cli's attack tests (HonestJsClient), one Node for many rounds against
//     any relays: prints {"event":"ready", peerId} and waits. Each stdin line `check <relay>
//     <bytes>` is a round: close the previous round's database (so a relay sees one topic of
//     this peer's), hang up on that relay and dial it again, add a file of <bytes> random bytes,
//     open a new `events` database and write one entry naming the file (no explicit sync); once
//     the relay subscribed to the database's topic (at most 30 s) it prints {"event":"checked",
//     address, file: {cid, sha256, bytes}, ms}, else {"event":"error"}.
// Diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createHash, randomBytes } from 'node:crypto'
import { heliaNode } from './helia-node.mjs'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const args = process.argv.slice(2)
const role = args[0]
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i < 0 ? fallback : args[i + 1]
}
const relay = option('--dial')
const directory = mkdtempSync(join(tmpdir(), `replication-${role}-`))

const { libp2p, helia } = await heliaNode(deps, {
  // --listen: reachable on loopback (the relay re-dials peers it saw on a topic, spec 3.5).
  addresses: { listen: args.includes('--listen') ? ['/ip4/127.0.0.1/tcp/0'] : [] },
  transports: [deps.tcp()],
  connectionEncrypters: [deps.noise()],
  streamMuxers: [deps.yamux()],
  services: {
    identify: deps.identify(),
    ping: deps.ping(),
    pubsub: deps.gossipsub({ allowPublishToZeroTopicPeers: true })
  }
}, { blockstore: new deps.MemoryBlockstore(), datastore: new deps.MemoryDatastore() })
const fs = deps.unixfs(helia)
// Both roles know did:key identities (Bob must verify Alice's).
const did = await import(new URL('../did/deps.mjs', import.meta.url).href)
did.OrbitDBIdentityProviderDID.setDIDResolver(did.KeyDidResolver.getResolver())
deps.useIdentityProvider(did.OrbitDBIdentityProviderDID)

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex')

let stopping = false
const stop = async (code = 0) => {
  if (stopping) return
  stopping = true
  try {
    for (const o of orbits) await o.stop()
    await helia.stop()
  } catch (err) {
    console.error('stop', err)
  } finally {
    rmSync(directory, { recursive: true, force: true })
    process.exit(code)
  }
}
const orbits = []
process.stdin.on('end', () => stop(0))
process.stdin.resume()

// `honest` may start before any relay is up: it dials each relay at its round.
if (relay) await libp2p.dial(deps.multiaddr(relay))

try {
  if (role === 'alice') await alice()
  else if (role === 'bob') await bob()
  else if (role === 'honest') await honest()
  else throw new Error(`unknown role ${role}`)
} catch (err) {
  console.error(err)
  out({ event: 'error', message: String(err && err.message ? err.message : err) })
}

async function alice () {
  const files = Number(option('--files', '20'))
  const fileSize = Number(option('--file-size', String(1024 * 1024)))
  const entries = Number(option('--entries', '200'))
  const useDid = args.includes('--did')

  const added = []
  for (let i = 0; i < files; i++) {
    const bytes = new Uint8Array(randomBytes(fileSize))
    const cid = await fs.addBytes(bytes, {
      rawLeaves: true, cidVersion: 1, chunker: deps.fixedSize({ chunkSize: 256 * 1024 })
    })
    added.push({ cid: cid.toString(), sha256: sha256(bytes), bytes: bytes.length })
  }

  let orbitdb
  if (useDid) {
    const identities = await deps.Identities({ ipfs: helia, path: join(directory, 'did-keys') })
    orbitdb = await deps.createOrbitDB({
      ipfs: helia,
      identities,
      identity: { provider: did.OrbitDBIdentityProviderDID({ didProvider: new did.Ed25519Provider(new Uint8Array(randomBytes(32))) }) },
      directory: join(directory, 'did')
    })
  } else {
    orbitdb = await deps.createOrbitDB({ ipfs: helia, id: 'alice', directory: join(directory, 'pk') })
  }
  orbits.push(orbitdb)
  const suffix = randomBytes(4).toString('hex')
  const dbs = useDid
    ? [await orbitdb.open(`alice-did-events-${suffix}`, { type: 'events' })]
    : [await orbitdb.open(`alice-events-${suffix}`, { type: 'events' }),
        await orbitdb.open(`alice-documents-${suffix}`, { type: 'documents' })]
  for (const db of dbs) db.events.on('error', (err) => console.error(`${db.name}: ${err?.stack ?? err}`))

  const counts = dbs.map(() => 0)
  const writeStart = Date.now()
  out({ event: 'writing', at: writeStart, dbs: dbs.map((db) => db.address.toString()), files: added.map((f) => f.cid) })
  for (let i = 0; i < entries; i++) {
    const which = i % dbs.length
    const db = dbs[which]
    const value = { text: `alice entry ${i}`, imageCid: added[i % files].cid }
    if (db.type === 'events') await db.add(value)
    else await db.put({ _id: `doc-${i}`, ...value })
    counts[which]++
  }
  const writeMs = Date.now() - writeStart

  // The hostile traffic below is meant for a relay that follows each database: wait (at most
  // 30 s) until a peer subscribed to every topic, so that a slow admission of one database (its
  // manifest fetched late) cannot make the relay miss its intruder entry.
  const subscribedBy = Date.now() + 30_000
  while (Date.now() < subscribedBy && !dbs.every((db) =>
    libp2p.services.pubsub.getSubscribers(db.address.toString()).length > 0)) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }

  // Hostile traffic on each database topic: garbage, and an entry by an unlisted identity.
  const intruderIdentity = await orbitdb.identities.createIdentity({ id: `intruder-${suffix}` })
  const intruders = []
  for (const db of dbs) {
    const topic = db.address.toString()
    await libp2p.services.pubsub.publish(topic, new Uint8Array(randomBytes(300)))
    const heads = await db.log.heads()
    const time = Math.max(...heads.map((h) => h.clock.time)) + 1
    const payload = db.type === 'events'
      ? { op: 'ADD', key: null, value: { text: 'intruder', imageCid: added[0].cid } }
      : { op: 'PUT', key: 'intruder', value: { _id: 'intruder', text: 'intruder' } }
    const entry = await deps.Entry.create(intruderIdentity, topic, payload, null,
      { id: intruderIdentity.publicKey, time }, heads.map((h) => h.hash), [])
    const block = await deps.Entry.encode(entry)
    await libp2p.services.pubsub.publish(topic, block.bytes)
    intruders.push(block.hash)
  }

  const { createInterface } = await import('node:readline')
  createInterface({ input: process.stdin }).on('line', async (line) => {
    const [cmd, count] = line.trim().split(/\s+/)
    if (cmd === 'dial') {
      // Another relay (the one it was connected to died): dial it, as a browser reconnecting.
      try {
        await libp2p.dial(deps.multiaddr(count))
        out({ event: 'dialled', address: count })
      } catch (err) {
        out({ event: 'error', message: String(err) })
      }
      return
    }
    if (cmd !== 'write') return
    try {
      const db = dbs[0]
      for (let i = 0; i < Number(count); i++) {
        const value = { text: `alice live entry ${counts[0]}`, imageCid: added[0].cid }
        if (db.type === 'events') await db.add(value)
        else await db.put({ _id: `live-${counts[0]}`, ...value })
        counts[0]++
      }
      out({ event: 'written', address: db.address.toString(), entries: counts[0] })
    } catch (err) {
      out({ event: 'error', message: String(err) })
    }
  })

  out({
    event: 'ready',
    stack: deps.stack,
    peerId: libp2p.peerId.toString(),
    dbs: dbs.map((db, i) => ({ address: db.address.toString(), type: db.type, entries: counts[i] })),
    files: added,
    writeMs,
    intruders
  })
}

async function honest () {
  const orbitdb = await deps.createOrbitDB({ ipfs: helia, id: 'honest', directory: join(directory, 'honest') })
  orbits.push(orbitdb)
  let previous = null
  const { createInterface } = await import('node:readline')
  createInterface({ input: process.stdin }).on('line', async (line) => {
    const [cmd, address, size] = line.trim().split(/\s+/)
    if (cmd !== 'check') return
    const started = Date.now()
    try {
      if (previous) await previous.close()
      previous = null
      const target = deps.multiaddr(address)
      await libp2p.hangUp(target)
      const connection = await libp2p.dial(target)
      const relayPeer = connection.remotePeer.toString()
      const bytes = new Uint8Array(randomBytes(Number(size)))
      const cid = await fs.addBytes(bytes, {
        rawLeaves: true, cidVersion: 1, chunker: deps.fixedSize({ chunkSize: 256 * 1024 })
      })
      const db = await orbitdb.open(`honest-${randomBytes(4).toString('hex')}`, { type: 'events' })
      previous = db
      db.events.on('error', (err) => console.error(`${db.name}: ${err?.stack ?? err}`))
      await db.add({ text: 'an honest entry', imageCid: cid.toString() })
      const topic = db.address.toString()
      const by = Date.now() + 30_000
      while (!libp2p.services.pubsub.getSubscribers(topic).some((p) => p.toString() === relayPeer)) {
        if (Date.now() > by) throw new Error(`${relayPeer} did not subscribe to ${topic} in 30 s`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      out({
        event: 'checked',
        address: topic,
        file: { cid: cid.toString(), sha256: sha256(bytes), bytes: bytes.length },
        ms: Date.now() - started
      })
    } catch (err) {
      out({ event: 'error', message: String(err && err.message ? err.message : err) })
    }
  })
  out({ event: 'ready', stack: deps.stack, peerId: libp2p.peerId.toString() })
}

async function bob () {
  const started = Date.now()
  const orbitdb = await deps.createOrbitDB({ ipfs: helia, id: 'bob', directory: join(directory, 'bob') })
  orbits.push(orbitdb)
  const wanted = option('--open', '').split(',').filter(Boolean).map((s) => {
    const [address, type, count] = s.split('=')
    return { address, type, count: Number(count) }
  })
  const result = []
  for (const want of wanted) {
    const db = await orbitdb.open(want.address)
    db.events.on('error', (err) => console.error(`${want.address}: ${err?.stack ?? err}`))
    let all = await db.all()
    while (all.length < want.count) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      all = await db.all()
    }
    const intruder = all.some((e) => JSON.stringify(e).includes('intruder'))
    result.push({ address: want.address, entries: all.length, intruder })
    out({ event: 'synced', address: want.address, entries: all.length, ms: Date.now() - started })
  }
  const files = []
  for (const text of option('--cat', '').split(',').filter(Boolean)) {
    const parts = []
    for await (const part of fs.cat(deps.CID.parse(text))) parts.push(Buffer.from(part))
    const bytes = Buffer.concat(parts)
    files.push({ cid: text, sha256: sha256(bytes), bytes: bytes.length })
  }
  out({ event: 'done', dbs: result, files, ms: Date.now() - started })
}
