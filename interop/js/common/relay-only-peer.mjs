// The writer and the reader of the relay-only reader tests (issue 37, orbitdb#1255), shared by
// every stack: run it with the stack's folder as the working directory. Each peer dials only the
// relay, listens nowhere and has no peer discovery (no pubsub-peer-discovery, no circuit relay
// transport), so the relay is the only way between writer and reader; `peers` reports who it is
// connected to, so a test can check that.
//
//   relay-only-peer.mjs writer --dial <relay> [--file-size BYTES]
//     Opens a new `events` database (publickey identity) and, with --file-size, adds one file of
//     random bytes with @helia/unixfs (256 KiB chunks, raw leaves, CIDv1). Prints {"event":
//     "ready", peerId, address, file: {cid, sha256, bytes} | null} and waits; stdin closing
//     stops it. The stdin line `write <count>` writes <count> entries one by one ({text:
//     "entry <i>", imageCid: the file's CID or null}), printing {"event":"written", index, hash}
//     after each; `peers` prints {"event":"peers", peers: [peer ids of open connections]};
//     `leave` hangs up on the relay and prints {"event":"left"} (the database stays open, so
//     `write` then writes with nobody to publish to); `back` dials the relay again and prints
//     {"event":"back"}.
//   relay-only-peer.mjs reader --dial <relay> --open <address> [--expect N] [--cat <cid>]
//     Opens the database by address with empty stores (no explicit sync, no reconnect, no
//     re-open afterwards), prints {"event":"opened"}, then {"event":"update", hash, text} for
//     each OrbitDB `update` event. With --expect it waits until the database holds N entries
//     and prints {"event":"all", texts: [...]}; with --cat it then reads the file and prints
//     {"event":"file", cid, sha256, bytes}. `peers` on stdin as for the writer.
// Diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createHash, randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
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
const directory = mkdtempSync(join(tmpdir(), `relay-only-${role}-`))
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex')

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
const fs = deps.unixfs(helia)
const orbitdb = await deps.createOrbitDB({ ipfs: helia, id: role, directory: join(directory, role) })

let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  try {
    await orbitdb.stop()
    await helia.stop()
  } catch (err) {
    console.error('stop', err)
  } finally {
    rmSync(directory, { recursive: true, force: true })
    process.exit(0)
  }
}
process.stdin.on('end', stop)
const peers = () => out({
  event: 'peers', peers: [...new Set(libp2p.getConnections().map((c) => c.remotePeer.toString()))]
})

const relay = deps.multiaddr(option('--dial'))
await libp2p.dial(relay)

try {
  if (role === 'writer') await writer()
  else if (role === 'reader') await reader()
  else throw new Error(`unknown role ${role}`)
} catch (err) {
  console.error(err)
  out({ event: 'error', message: String(err && err.message ? err.message : err) })
}

async function writer () {
  let file = null
  const size = Number(option('--file-size', '0'))
  if (size > 0) {
    const bytes = new Uint8Array(randomBytes(size))
    const cid = await fs.addBytes(bytes, {
      rawLeaves: true, cidVersion: 1, chunker: deps.fixedSize({ chunkSize: 256 * 1024 })
    })
    file = { cid: cid.toString(), sha256: sha256(bytes), bytes: bytes.length }
  }
  const db = await orbitdb.open(`relay-only-${randomBytes(4).toString('hex')}`, { type: 'events' })
  db.events.on('error', (err) => console.error(`writer: ${err?.stack ?? err}`))
  let written = 0
  // One command at a time: the lines queue.
  let queue = Promise.resolve()
  createInterface({ input: process.stdin }).on('line', (line) => {
    queue = queue.then(async () => {
      const [cmd, count] = line.trim().split(/\s+/)
      if (cmd === 'peers') return peers()
      if (cmd === 'leave') {
        await libp2p.hangUp(relay)
        return out({ event: 'left' })
      }
      if (cmd === 'back') {
        await libp2p.dial(relay)
        return out({ event: 'back' })
      }
      if (cmd !== 'write') return
      for (let i = 0; i < Number(count); i++) {
        const hash = await db.add({ text: `entry ${written}`, imageCid: file ? file.cid : null })
        out({ event: 'written', index: written, hash })
        written++
      }
    }).catch((err) => out({ event: 'error', message: String(err) }))
  })
  out({ event: 'ready', peerId: libp2p.peerId.toString(), address: db.address.toString(), file })
}

async function reader () {
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() === 'peers') peers()
  })
  const db = await orbitdb.open(option('--open'))
  db.events.on('error', (err) => console.error(`reader: ${err?.stack ?? err}`))
  db.events.on('update', (entry) => {
    out({ event: 'update', hash: entry.hash, text: entry.payload?.value?.text ?? null })
  })
  out({ event: 'opened', peerId: libp2p.peerId.toString() })
  const expect = Number(option('--expect', '0'))
  if (expect > 0) {
    let all = await db.all()
    while (all.length < expect) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      all = await db.all()
    }
    out({ event: 'all', texts: all.map((e) => e.value.text) })
  }
  const cat = option('--cat')
  if (cat) {
    const parts = []
    for await (const part of fs.cat(deps.CID.parse(cat))) parts.push(Buffer.from(part))
    const bytes = Buffer.concat(parts)
    out({ event: 'file', cid: cat, sha256: sha256(bytes), bytes: bytes.length })
  }
}
