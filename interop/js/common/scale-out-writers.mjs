// Writers of bench/ScaleOutBench.java (issue 24), shared by stack A (OrbitDB 3) and stack B
// (OrbitDB 4): run with the stack's folder as working directory. One Node process holds several
// independent writers; each is its own libp2p peer (TCP, Noise, yamux, identify, ping,
// gossipsub; listens nowhere), Helia (bitswap, in-memory stores) and OrbitDB (publickey
// identity) writing one `events` database of its own.
//
//   scale-out-writers.mjs --writers K --entries N --files F --file-size BYTES [--mode catch-up|live]
//     Each writer adds F files of random bytes (@helia/unixfs, 256 KiB chunks, raw leaves, CIDv1)
//     and opens a new database; in catch-up mode (the default) it also appends its N entries
//     now, offline ({ text, imageCid } naming file i % F; F = 0: no imageCid), and closes the
//     database. Then prints {"event":"prepared", writers: [{address, files, entries}]} and reads
//     stdin lines:
//       {"cmd":"connect","relays":[multiaddr,...],"first":I}
//         writer j dials relays[(I + j) % relays.length], one writer after the other (a dial
//         that fails after 30 s is retried, at most 3 attempts); prints {"event":"connected",
//         ms, retries}.
//       {"cmd":"go"}
//         every writer at once: catch-up: opens its database again (it subscribes to the topic,
//         its relay follows it and fetches everything); live: waits until its relay subscribed
//         to its topic and appends its N entries. Prints {"event":"written", ms,
//         slowestWriterMs} (catch-up: once every database is open again).
//     stdin closing stops every writer.
// Diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { heliaNode } from './helia-node.mjs'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i < 0 ? fallback : args[i + 1]
}
const count = Number(option('--writers', '10'))
const entries = Number(option('--entries', '100'))
const files = Number(option('--files', '0'))
const fileSize = Number(option('--file-size', '262144'))
const mode = option('--mode', 'catch-up')
if (mode !== 'catch-up' && mode !== 'live') throw new Error(`unknown mode ${mode}`)
const directory = mkdtempSync(join(tmpdir(), 'scale-out-writers-'))

const writers = []
let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  try {
    for (const w of writers) {
      await w.orbitdb.stop()
      await w.helia.stop()
      await w.libp2p.stop()
    }
  } catch (err) {
    console.error('stop', err)
  } finally {
    rmSync(directory, { recursive: true, force: true })
    process.exit(0)
  }
}
process.stdin.on('end', stop)

async function append (writer) {
  for (let i = 0; i < entries; i++) {
    await writer.db.add(files > 0
      ? { text: `entry ${i}`, imageCid: writer.files[i % files] }
      : { text: `entry ${i}` })
  }
}

async function startWriter (j) {
  const { libp2p, helia } = await heliaNode(deps, {
    addresses: { listen: [] },
    // 30 s instead of 10 s for a dial (TCP, Noise, yamux).
    connectionManager: { dialTimeout: 30_000 },
    transports: [deps.tcp()],
    connectionEncrypters: [deps.noise()],
    streamMuxers: [deps.yamux()],
    services: {
      identify: deps.identify(),
      ping: deps.ping(),
      pubsub: deps.gossipsub({ allowPublishToZeroTopicPeers: true })
    }
  }, { blockstore: new deps.MemoryBlockstore(), datastore: new deps.MemoryDatastore() })
  const orbitdb = await deps.createOrbitDB({
    ipfs: helia, id: `writer-${process.pid}-${j}`, directory: join(directory, `writer-${j}`)
  })
  const fs = deps.unixfs(helia)
  const added = []
  for (let i = 0; i < files; i++) {
    const cid = await fs.addBytes(new Uint8Array(randomBytes(fileSize)), {
      rawLeaves: true, cidVersion: 1, chunker: deps.fixedSize({ chunkSize: 256 * 1024 })
    })
    added.push(cid.toString())
  }
  const db = await orbitdb.open(`scale-out-${randomBytes(6).toString('hex')}`, { type: 'events' })
  const writer = { libp2p, helia, orbitdb, db, address: db.address.toString(), files: added }
  writers.push(writer)
  if (mode === 'catch-up') {
    // Written offline, then closed (its topic unsubscribed) until `go` opens it again.
    await append(writer)
    await db.close()
    writer.db = null
  }
  return writer
}

// A dial that fails (30 s) is retried, at most 3 attempts, as a reconnecting client would.
let retries = 0
async function dial (writer, relay) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await writer.libp2p.dial(relay)
    } catch (err) {
      if (attempt >= 3) throw err
      retries++
      console.error(`dial ${relay} failed (attempt ${attempt}), retrying: ${err.message}`)
    }
  }
}

// Dials one writer after the other (not timed: connecting is not what is measured). A writer
// whose connection to its relay closes dials it again, as a client would (on a loaded machine
// js-libp2p resets connections whose operations time out); each redial prints
// {"event":"reconnected", writer}.
async function connect ({ relays, first }) {
  const t0 = performance.now()
  for (let j = 0; j < writers.length; j++) {
    const writer = writers[j]
    const relay = deps.multiaddr(relays[(first + j) % relays.length])
    const connection = await dial(writer, relay)
    writer.relay = connection.remotePeer
    writer.libp2p.addEventListener('peer:disconnect', (event) => {
      if (stopping || !event.detail.equals(writer.relay)) return
      dial(writer, relay).then(() => out({ event: 'reconnected', writer: j }),
        (err) => console.error(`writer ${j}: redial failed: ${err.message}`))
    })
  }
  out({ event: 'connected', ms: performance.now() - t0, retries })
}

// All writers at once. catch-up: each opens its database again (subscribes to its topic, so
// its relay follows it and fetches the log and media from it); live: each appends its entries.
async function go () {
  const t0 = performance.now()
  let slowest = 0
  await Promise.all(writers.map(async (writer) => {
    if (mode === 'catch-up') {
      writer.db = await writer.orbitdb.open(writer.address)
      return
    }
    const topic = writer.address
    const deadline = Date.now() + 120_000
    while (!writer.libp2p.services.pubsub.getSubscribers(topic).some((p) => p.equals(writer.relay))) {
      if (Date.now() > deadline) throw new Error(`relay did not subscribe to ${topic}`)
      await sleep(20)
    }
    const start = performance.now()
    await append(writer)
    slowest = Math.max(slowest, performance.now() - start)
  }))
  out({ event: 'written', ms: performance.now() - t0, slowestWriterMs: slowest })
}

try {
  // One writer at a time: their set-up is CPU-bound, in parallel it only interleaves.
  for (let j = 0; j < count; j++) await startWriter(j)
  out({
    event: 'prepared',
    writers: writers.map((w) => ({ address: w.address, files: w.files, entries }))
  })
  let busy = Promise.resolve()
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (!line.trim()) return
    busy = busy.then(async () => {
      try {
        const command = JSON.parse(line)
        if (command.cmd === 'connect') await connect(command)
        else if (command.cmd === 'go') await go()
        else throw new Error(`unknown command ${command.cmd}`)
      } catch (err) {
        console.error(err)
        out({ event: 'error', message: String(err && err.message ? err.message : err) })
      }
    })
  })
} catch (err) {
  console.error(err)
  out({ event: 'error', message: String(err && err.message ? err.message : err) })
}
