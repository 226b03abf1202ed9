// Peers of bench/ReplicationLatencyBench.java (issue 17), shared by stack A (OrbitDB 3) and stack B
// (OrbitDB 4): run with the stack's folder as working directory. Output: one JSON line per event
// on stdout; times are epoch milliseconds with fractions (performance.timeOrigin + now()), so
// the benchmark can compare them with the relay's HTTP answers taken on the same machine.
//
//   replication-bench-peer.mjs writer
//     One OrbitDB writer (publickey identity, in-memory stores, TCP, listens nowhere) driven by
//     stdin lines, each a JSON command:
//       {"cmd":"round","peer":<multiaddr>,"entries":N,"files":F,"fileSize":BYTES,"settleMs":MS}
//         adds F new files of random bytes (@helia/unixfs, 256 KiB chunks, raw leaves, CIDv1),
//         dials <peer>, opens a new `events` database, waits until <peer> subscribed to its topic
//         and then MS more, prints {"event":"writing"} and appends N entries one after another
//         ({ text, imageCid } naming file i % F; F = 0: no imageCid), printing {"event":"round",
//         address, files, peer, start, end, writeMs, slowestMs, cpuMs, eventLoopBusy} (start/end:
//         around the N appends; cpuMs: this process's CPU time during them; eventLoopBusy: the
//         share of that time its event loop was busy, performance.eventLoopUtilization;
//         mainThreadRunMs, mainThreadRunQueueMs: the JS thread's time on a CPU and runnable but
//         waiting for one, /proc/self/schedstat).
//       {"cmd":"leave"} closes the database, hangs up from the peer, prints {"event":"left"}.
//   replication-bench-peer.mjs subscriber
//     A plain js-libp2p peer (TCP, Noise, yamux, identify, ping, gossipsub; no bitswap, no
//     OrbitDB) on 127.0.0.1: subscribes to every /orbitdb/ topic a connected peer subscribes to,
//     and does nothing else. Prints {"event":"listening", addrs}.
//   replication-bench-peer.mjs reader --dial <multiaddr> --open <address> --entries N
//     A fresh OrbitDB reader: starts (libp2p, Helia, OrbitDB; not timed), prints
//     {"event":"started"}, then from just before it dials <multiaddr> (t0) opens <address> and
//     waits until the database holds N entries. Prints {"event":"done", dialMs, openMs, firstMs,
//     allMs, entries} (each from t0: dial done, open() returned, first entry readable, all N).
//   replication-bench-peer.mjs floor --entries N [--oldest-first]
//     The reader's floor, no network: one process writes N entries (no media) and then a second,
//     fresh OrbitDB instance on the same Helia (so every block is local; the writer's database
//     closed first, it holds the heads protocol) opens the database and
//     joins the writer's head, as a reader does with the head a relay sends it. Prints
//     {"event":"done", openMs, firstMs, allMs, entries} (from just before open(); firstMs: the
//     first join returned): what a reader's own CPU costs however fast its relay answers.
//     With --oldest-first the reader joins every entry itself, oldest first, instead of the head:
//     what a relay pushing the whole history over the heads exchange would cost the reader.
// Diagnostics go to stderr; stdin closing stops any role. BENCH_CPU_PROF_DIR: see profile().
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { randomBytes } from 'node:crypto'
import { heliaNode } from './helia-node.mjs'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const args = process.argv.slice(2)
const role = args[0]
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i < 0 ? fallback : args[i + 1]
}
const directory = mkdtempSync(join(tmpdir(), `replication-bench-${role}-`))

const config = {
  addresses: { listen: role === 'subscriber' ? ['/ip4/127.0.0.1/tcp/0'] : [] },
  transports: [deps.tcp()],
  connectionEncrypters: [deps.noise()],
  streamMuxers: [deps.yamux()],
  services: {
    identify: deps.identify(),
    ping: deps.ping(),
    pubsub: deps.gossipsub({ allowPublishToZeroTopicPeers: true })
  }
}
// Helia 7 (stack C) builds libp2p itself, so there the Helia node comes first (every role);
// stacks A and B create libp2p here and a Helia on it in startOrbit.
const node = deps.createHelia != null
  ? await heliaNode(deps, config, { blockstore: new deps.MemoryBlockstore(), datastore: new deps.MemoryDatastore() })
  : null
const libp2p = node?.libp2p ?? await deps.createLibp2p(config)
const pubsub = libp2p.services.pubsub

let stopping = false
const closers = []
const stop = async () => {
  if (stopping) return
  stopping = true
  try {
    for (const close of closers.reverse()) await close()
    await libp2p.stop()
  } catch (err) {
    console.error('stop', err)
  } finally {
    rmSync(directory, { recursive: true, force: true })
    process.exit(0)
  }
}
process.stdin.on('end', stop)

try {
  if (role === 'writer') await writer()
  else if (role === 'subscriber') await subscriber()
  else if (role === 'reader') await reader()
  else if (role === 'floor') await floor()
  else throw new Error(`unknown role ${role}`)
} catch (err) {
  console.error(err)
  out({ event: 'error', message: String(err && err.message ? err.message : err) })
}

async function startOrbit (id) {
  let helia = node?.helia
  if (helia == null) {
    helia = new deps.Helia({
      libp2p,
      blockstore: new deps.MemoryBlockstore(),
      datastore: new deps.MemoryDatastore(),
      blockBrokers: [deps.bitswap()],
      routers: [deps.libp2pRouting(libp2p)]
    })
    await helia.start()
  }
  const orbitdb = await deps.createOrbitDB({ ipfs: helia, id, directory: join(directory, id) })
  closers.push(() => helia.stop(), () => orbitdb.stop())
  return { helia, orbitdb }
}

async function writer () {
  const { helia, orbitdb } = await startOrbit('writer')
  const fs = deps.unixfs(helia)
  let current = null
  let rounds = 0
  let busy = Promise.resolve()
  const { createInterface } = await import('node:readline')
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (!line.trim()) return
    busy = busy.then(async () => {
      try {
        const command = JSON.parse(line)
        if (command.cmd === 'round') current = await round(command)
        else if (command.cmd === 'leave') {
          if (current) {
            await current.db.close()
            await libp2p.hangUp(current.peerId)
            current = null
          }
          out({ event: 'left' })
        } else throw new Error(`unknown command ${command.cmd}`)
      } catch (err) {
        console.error(err)
        out({ event: 'error', message: String(err && err.message ? err.message : err) })
      }
    })
  })
  out({ event: 'ready', peerId: libp2p.peerId.toString() })

  async function round ({ peer, entries, files, fileSize, settleMs }) {
    const added = []
    for (let i = 0; i < files; i++) {
      const cid = await fs.addBytes(new Uint8Array(randomBytes(fileSize)), {
        rawLeaves: true, cidVersion: 1, chunker: deps.fixedSize({ chunkSize: 256 * 1024 })
      })
      added.push(cid.toString())
    }
    const connection = await libp2p.dial(deps.multiaddr(peer))
    const peerId = connection.remotePeer
    const db = await orbitdb.open(`bench-${randomBytes(6).toString('hex')}`, { type: 'events' })
    const topic = db.address.toString()
    const deadline = Date.now() + 60_000
    while (!pubsub.getSubscribers(topic).some((p) => p.equals(peerId))) {
      if (Date.now() > deadline) throw new Error(`${peer} did not subscribe to ${topic}`)
      await sleep(5)
    }
    await sleep(settleMs ?? 500)
    let slowest = 0
    const profiler = await profile()
    const rpcs = traceRpcs()
    out({ event: 'writing' })
    const cpu = process.cpuUsage()
    const elu = performance.eventLoopUtilization()
    const sched = schedstat()
    const start = now()
    for (let i = 0; i < entries; i++) {
      const before = now()
      await db.add(files > 0
        ? { text: `entry ${i}`, imageCid: added[i % files] }
        : { text: `entry ${i}` })
      slowest = Math.max(slowest, now() - before)
    }
    const end = now()
    const used = process.cpuUsage(cpu)
    const loop = performance.eventLoopUtilization(elu)
    const schedAfter = schedstat()
    rounds++
    if (rpcs) console.error(`writer round ${rounds} (${entries} entries): received ${JSON.stringify(rpcs.stop())}`)
    if (profiler) await profiler.stop(`${rounds}-${peerId.toString().slice(-6)}-${entries}`)
    out({
      event: 'round', address: topic, files: added, peer: peerId.toString(), start, end,
      writeMs: end - start, slowestMs: slowest, cpuMs: (used.user + used.system) / 1000,
      eventLoopBusy: loop.utilization, mainThreadRunMs: schedAfter[0] - sched[0],
      mainThreadRunQueueMs: schedAfter[1] - sched[1]
    })
    return { db, peerId }
  }
}

// The JS thread's time on a CPU and waiting for one (ms), from /proc/self/schedstat (Linux).
function schedstat () {
  try {
    const fields = readFileSync('/proc/self/schedstat', 'utf8').trim().split(' ').map(Number)
    return [fields[0] / 1e6, fields[1] / 1e6]
  } catch {
    return [NaN, NaN]
  }
}

// BENCH_TRACE=1: counts the gossipsub RPCs this peer receives (messages, control by kind).
function traceRpcs () {
  if (!process.env.BENCH_TRACE) return null
  const counts = {}
  const add = (k, n = 1) => { if (n) counts[k] = (counts[k] ?? 0) + n }
  const original = pubsub.handleReceivedRpc
  pubsub.handleReceivedRpc = function (from, rpc) {
    add('rpcs')
    add('messages', rpc.messages?.length ?? 0)
    add('subscriptions', rpc.subscriptions?.length ?? 0)
    const control = rpc.control ?? {}
    for (const kind of ['ihave', 'iwant', 'graft', 'prune', 'idontwant']) {
      add(kind, control[kind]?.length ?? 0)
    }
    return original.call(this, from, rpc)
  }
  return { stop () { pubsub.handleReceivedRpc = original; return counts } }
}

// BENCH_CPU_PROF_DIR=<dir>: a V8 CPU profile of each round's appends, <dir>/<n>-<peer>-<N>.cpuprofile
// (open in Chrome DevTools or speedscope).
async function profile () {
  const dir = process.env.BENCH_CPU_PROF_DIR
  if (!dir) return null
  const { Session } = await import('node:inspector/promises')
  const { writeFileSync, mkdirSync } = await import('node:fs')
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 200 })
  await session.post('Profiler.start')
  return {
    async stop (name) {
      const { profile } = await session.post('Profiler.stop')
      session.disconnect()
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile))
    }
  }
}

async function subscriber () {
  pubsub.addEventListener('subscription-change', (event) => {
    for (const sub of event.detail.subscriptions) {
      if (sub.subscribe && sub.topic.startsWith('/orbitdb/') &&
          !pubsub.getTopics().includes(sub.topic)) {
        pubsub.subscribe(sub.topic)
      }
    }
  })
  out({ event: 'listening', addrs: libp2p.getMultiaddrs().map((a) => a.toString()) })
}

async function reader () {
  const dial = option('--dial')
  const address = option('--open')
  const want = Number(option('--entries', '1'))
  const { helia, orbitdb } = await startOrbit('reader')
  out({ event: 'started' })
  const t0 = now()
  if (process.env.BENCH_TRACE) {
    // Where a reader's time goes: block fetches and pubsub subscriptions, ms from t0, on stderr.
    const trace = (what) => console.error(`reader +${(now() - t0).toFixed(1)} ms ${what}`)
    // Helia 5 answers a promise of the block, Helia 6 an async iterable of its bytes.
    const get = helia.blockstore.get.bind(helia.blockstore)
    helia.blockstore.get = function (cid, options) {
      const started = now()
      const done = () => {
        const ms = now() - started
        if (ms >= 1) trace(`fetched ${cid.toString().slice(-8)} in ${ms.toFixed(1)} ms`)
      }
      const result = get(cid, options)
      if (typeof result?.then === 'function') return result.then((block) => { done(); return block })
      if (result?.[Symbol.asyncIterator]) {
        return (async function * () { yield * result; done() })()
      }
      return result
    }
    pubsub.addEventListener('subscription-change', (event) => trace(`subscription-change ${
      event.detail.subscriptions.map((s) => s.topic.slice(-8) + ':' + s.subscribe).join(',')}`))
    libp2p.addEventListener('peer:identify', () => trace('identified'))
  }
  await libp2p.dial(deps.multiaddr(dial))
  const dialMs = now() - t0
  const db = await orbitdb.open(address)
  const openMs = now() - t0
  let firstMs = null
  let allMs = null
  let count = 0
  const done = new Promise((resolve) => {
    const check = async () => {
      count = (await db.log.values()).length
      if (count > 0 && firstMs === null) firstMs = now() - t0
      if (count >= want && allMs === null) {
        allMs = now() - t0
        resolve()
      }
    }
    let checking = Promise.resolve()
    db.events.on('update', () => {
      if (process.env.BENCH_TRACE) console.error(`reader +${(now() - t0).toFixed(1)} ms update`)
      checking = checking.then(check)
    })
    // Entries joined before the listener was attached (during open) count from here.
    checking = checking.then(check)
  })
  const timeout = setTimeout(() => {
    out({ event: 'error', message: `${count} of ${want} entries after 60 s` })
  }, 60_000)
  await done
  clearTimeout(timeout)
  out({ event: 'done', dialMs, openMs, firstMs, allMs, entries: count })
}

async function floor () {
  const want = Number(option('--entries', '1'))
  const { helia, orbitdb } = await startOrbit('writer')
  const written = await orbitdb.open(`floor-${randomBytes(6).toString('hex')}`, { type: 'events' })
  for (let i = 0; i < want; i++) await written.add({ text: `entry ${i}` })
  const oldestFirst = args.includes('--oldest-first')
  const [head] = await written.log.heads()
  // values() is oldest first; the blocks are read before the writer's database closes.
  const blocks = oldestFirst
    ? await Promise.all((await written.log.values()).map((e) => written.log.storage.get(e.hash)))
    : [await written.log.storage.get(head.hash)]
  const address = written.address.toString()
  await written.close()
  const reader = await deps.createOrbitDB({ ipfs: helia, id: 'reader', directory: join(directory, 'reader') })
  closers.push(() => reader.stop())
  const t0 = now()
  const db = await reader.open(address)
  const openMs = now() - t0
  let firstMs
  for (const bytes of blocks) {
    await db.log.joinEntry(await deps.Entry.decode(bytes))
    firstMs ??= now() - t0
  }
  const allMs = now() - t0
  const count = (await db.log.values()).length
  out({ event: 'done', openMs, firstMs, allMs, entries: count })
}
