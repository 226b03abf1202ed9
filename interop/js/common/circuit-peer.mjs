// A js-libp2p circuit relay v2 client for the Java relay's interop tests, shared by stack A and
// stack B (run it with the stack's folder as the working directory so ./deps.mjs picks that
// stack's packages). Output is JSON on stdout, one object per line; diagnostics go to stderr.
//
//   circuit-peer.mjs listen <relay multiaddr>
//       reserve a slot on the relay through @libp2p/circuit-relay-v2's transport (listening on
//       <relay>/p2p-circuit), answer ping and the echo protocol over relayed (limited)
//       connections; print {"event":"reserved","addrs":[...]} then one line per relayed
//       connection opened or closed. Commands on stdin, one per line:
//         refresh   send a RESERVE on a new hop stream over the existing relay connection (what
//                   the transport does before expiry) and print {"event":"refreshed",...}
//       exits when stdin closes.
//   circuit-peer.mjs dial <circuit multiaddr> <echo sizes, comma-separated>
//       dial through the relay, ping, then one echo round trip per size, in order; print one
//       JSON result with each echo's outcome, then exit.
//   circuit-peer.mjs hold <circuit multiaddr> <ping interval ms>
//       dial through the relay and ping at the interval until the relayed connection closes;
//       print {"event":"ping",...} per ping and {"event":"closed","afterMs":...}, then exit.
//   circuit-peer.mjs reconnect <relay multiaddr> <times>
//       with one identity: start a node, reserve on the relay, print {"event":"reserved","i":i},
//       stop the node, print {"event":"stopped","i":i}, wait for a line on stdin; <times> times.
//   circuit-peer.mjs reserve <relay multiaddr>
//       a fresh peer sends one RESERVE and prints {"event":"reserve","status":...}, then exits.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const ECHO = '/relay-pinner/echo/1.0.0'
const HOP = '/libp2p/circuit/relay/0.2.0/hop'
const CHUNK = 16 * 1024
const v3 = deps.libp2pVersion === 3
const STREAM_OPTIONS = { maxInboundStreams: 64, maxOutboundStreams: 64, runOnLimitedConnection: true }
const STATUS = { 100: 'OK', 200: 'RESERVATION_REFUSED', 201: 'RESOURCE_LIMIT_EXCEEDED', 202: 'PERMISSION_DENIED', 203: 'CONNECTION_FAILED', 204: 'NO_RESERVATION', 400: 'MALFORMED_MESSAGE', 401: 'UNEXPECTED_MESSAGE' }

function bytesOf (chunk) {
  return chunk instanceof Uint8Array ? chunk : chunk.subarray()
}

async function createNode ({ listen = [], privateKey } = {}) {
  return deps.createLibp2p({
    ...(privateKey != null ? { privateKey } : {}),
    addresses: { listen },
    transports: [deps.tcp(), deps.webSockets(), deps.circuitRelayTransport()],
    connectionEncrypters: [deps.noise()],
    streamMuxers: [deps.yamux()],
    connectionGater: { denyDialMultiaddr: () => false },
    services: {
      identify: deps.identify(),
      ping: deps.ping()
    }
  })
}

async function handleEcho (node) {
  if (v3) {
    await node.handle(ECHO, async (stream) => {
      try {
        for await (const chunk of stream) {
          if (!stream.send(chunk)) await stream.onDrain()
        }
        await stream.close()
      } catch (err) {
        stream.abort(err)
      }
    }, STREAM_OPTIONS)
  } else {
    await node.handle(ECHO, async ({ stream }) => {
      await stream.sink(stream.source)
    }, STREAM_OPTIONS)
  }
}

// Streams go on the relayed connection itself: js-libp2p's dialProtocol and ping(peer) reuse only
// unlimited connections and would dial a new circuit for every call.
async function echoRoundTrip (connection, size) {
  const data = randomBytes(size)
  const want = createHash('sha256').update(data).digest('hex')
  const got = createHash('sha256')
  let received = 0
  const stream = await connection.newStream(ECHO, STREAM_OPTIONS)
  const read = async (source) => {
    for await (const chunk of source) {
      const bytes = bytesOf(chunk)
      received += bytes.length
      got.update(bytes)
    }
  }
  if (v3) {
    const write = async () => {
      for (let i = 0; i < size; i += CHUNK) {
        if (!stream.send(data.subarray(i, i + CHUNK))) await stream.onDrain()
      }
      await stream.close()
    }
    await Promise.all([write(), read(stream)])
  } else {
    const chunks = async function * () {
      for (let i = 0; i < size; i += CHUNK) yield data.subarray(i, i + CHUNK)
    }
    await Promise.all([stream.sink(chunks()), read(stream.source)])
  }
  if (received !== size || got.digest('hex') !== want) {
    throw new Error(`echo mismatch: sent ${size} bytes, got ${received}`)
  }
}

// One /ipfs/ping/1.0.0 round trip on the connection; resolves with the round-trip time.
async function pingOver (connection) {
  const payload = randomBytes(32)
  const started = Date.now()
  const stream = await connection.newStream('/ipfs/ping/1.0.0', STREAM_OPTIONS)
  const chunks = []
  let received = 0
  if (v3) {
    stream.send(payload)
    for await (const chunk of stream) {
      chunks.push(bytesOf(chunk)); received += bytesOf(chunk).length
      if (received >= 32) break
    }
    await stream.close()
  } else {
    await stream.sink([payload])
    for await (const chunk of stream.source) {
      chunks.push(bytesOf(chunk)); received += bytesOf(chunk).length
      if (received >= 32) break
    }
  }
  if (!Buffer.concat(chunks).equals(payload)) throw new Error('ping echo mismatch')
  return Date.now() - started
}

function circuitAddrs (node) {
  return node.getMultiaddrs().map(String).filter((a) => a.includes('/p2p-circuit'))
}

async function waitForReservation (node, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs
  while (circuitAddrs(node).length === 0) {
    if (Date.now() > deadline) throw new Error('no relay reservation within ' + timeoutMs + ' ms')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return circuitAddrs(node)
}

// --- raw hop messages (the transport does not expose a refresh) --------------------------------

function varint (n) {
  const bytes = []
  while (n >= 0x80) { bytes.push((n & 0x7f) | 0x80); n = Math.floor(n / 128) }
  bytes.push(n)
  return bytes
}

function readVarint (buf, pos) {
  let value = 0; let shift = 0
  for (;;) {
    const b = buf[pos++]
    value += (b & 0x7f) * 2 ** shift
    if ((b & 0x80) === 0) return [value, pos]
    shift += 7
  }
}

// Walks a protobuf message: returns { field: [values] } with varints as numbers and
// length-delimited fields as Uint8Arrays.
function fields (buf) {
  const outFields = {}
  let pos = 0
  while (pos < buf.length) {
    let key; [key, pos] = readVarint(buf, pos)
    const field = Math.floor(key / 8); const wire = key & 7
    let value
    if (wire === 0) {
      [value, pos] = readVarint(buf, pos)
    } else if (wire === 2) {
      let len; [len, pos] = readVarint(buf, pos)
      value = buf.subarray(pos, pos + len); pos += len
    } else {
      throw new Error('unexpected wire type ' + wire)
    }
    (outFields[field] ??= []).push(value)
  }
  return outFields
}

async function rawReserve (node, relay) {
  const stream = await node.dialProtocol(relay, HOP, STREAM_OPTIONS)
  const request = Uint8Array.from([...varint(2), 0x08, 0x00]) // HopMessage { type: RESERVE }
  const chunks = []
  if (v3) {
    stream.send(request)
    for await (const chunk of stream) chunks.push(bytesOf(chunk))
    await stream.close()
  } else {
    await stream.sink([request])
    for await (const chunk of stream.source) chunks.push(bytesOf(chunk))
  }
  const all = Buffer.concat(chunks)
  const [length, start] = readVarint(all, 0)
  const message = fields(all.subarray(start, start + length))
  const status = message[5]?.[0]
  const reservation = message[3] != null ? fields(message[3][0]) : null
  return {
    status: STATUS[status] ?? String(status),
    expire: reservation?.[1]?.[0] ?? null,
    addrs: (reservation?.[2] ?? []).map((a) => String(deps.multiaddr(a))),
    hasVoucher: reservation?.[3] != null
  }
}

// --- modes -----------------------------------------------------------------------------------

async function listen (relay) {
  const node = await createNode({ listen: [relay + '/p2p-circuit'] })
  await handleEcho(node)
  node.addEventListener('connection:open', (event) => {
    const c = event.detail
    if (String(c.remoteAddr).includes('/p2p-circuit')) {
      out({ event: 'relayed:open', remotePeer: c.remotePeer.toString(), limits: describeLimits(c.limits) })
    }
  })
  node.addEventListener('connection:close', (event) => {
    const c = event.detail
    out({ event: 'connection:close', remotePeer: c.remotePeer.toString(), relayed: String(c.remoteAddr).includes('/p2p-circuit') })
  })
  const addrs = await waitForReservation(node)
  out({ event: 'reserved', stack: deps.stack, peerId: node.peerId.toString(), addrs })
  const lines = createInterface({ input: process.stdin })
  for await (const line of lines) {
    if (line.trim() === 'refresh') {
      try {
        out({ event: 'refreshed', ...(await rawReserve(node, deps.multiaddr(relay))) })
      } catch (err) {
        out({ event: 'refreshed', error: String(err) })
      }
    }
  }
  await node.stop()
  process.exit(0)
}

function describeLimits (limits) {
  if (limits == null) return null
  return { bytes: limits.bytes == null ? null : String(limits.bytes), seconds: limits.seconds ?? null }
}

async function dial (target, sizes) {
  const node = await createNode()
  const ma = deps.multiaddr(target)
  const started = Date.now()
  const connection = await node.dial(ma)
  const rtt = await pingOver(connection)
  const echoes = []
  for (const size of sizes) {
    const echoStarted = Date.now()
    try {
      await echoRoundTrip(connection, size)
      echoes.push({ bytes: size, ok: true, ms: Date.now() - echoStarted })
    } catch (err) {
      echoes.push({ bytes: size, ok: false, error: String(err?.name ?? err) + ': ' + String(err?.message ?? '') })
    }
  }
  out({
    stack: deps.stack,
    remotePeer: connection.remotePeer.toString(),
    remoteAddr: String(connection.remoteAddr),
    limits: describeLimits(connection.limits),
    connectMs: Date.now() - started,
    rtt,
    echoes
  })
  await node.stop()
}

async function hold (target, intervalMs) {
  const node = await createNode()
  const ma = deps.multiaddr(target)
  const connection = await node.dial(ma)
  const opened = Date.now()
  const closed = new Promise((resolve) => {
    node.addEventListener('connection:close', (event) => {
      if (event.detail.id === connection.id) resolve()
    })
  })
  let done = false
  closed.then(() => { done = true })
  while (!done) {
    try {
      const rtt = await pingOver(connection)
      out({ event: 'ping', ok: true, atMs: Date.now() - opened, rtt })
    } catch (err) {
      out({ event: 'ping', ok: false, atMs: Date.now() - opened, error: String(err?.name ?? err) })
    }
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, intervalMs))])
  }
  out({ event: 'closed', afterMs: Date.now() - opened })
  await node.stop()
}

async function reconnect (relay, times) {
  const privateKey = await deps.generateKeyPair('Ed25519')
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
  for (let i = 0; i < times; i++) {
    const node = await createNode({ listen: [relay + '/p2p-circuit'], privateKey })
    const addrs = await waitForReservation(node)
    out({ event: 'reserved', i, peerId: node.peerId.toString(), addrs })
    await node.stop()
    out({ event: 'stopped', i })
    const next = await lines.next()
    if (next.done) break
  }
  process.exit(0)
}

async function reserve (relay) {
  const node = await createNode()
  const ma = deps.multiaddr(relay)
  await node.dial(ma)
  out({ event: 'reserve', peerId: node.peerId.toString(), ...(await rawReserve(node, ma)) })
  await node.stop()
}

const [mode, arg, extra] = process.argv.slice(2)
if (mode === 'listen') {
  await listen(arg)
} else if (mode === 'dial') {
  await dial(arg, (extra ?? '').split(',').filter((s) => s !== '').map(Number))
  process.exit(0)
} else if (mode === 'hold') {
  await hold(arg, Number(extra ?? 500))
  process.exit(0)
} else if (mode === 'reconnect') {
  await reconnect(arg, Number(extra ?? 20))
} else if (mode === 'reserve') {
  await reserve(arg)
  process.exit(0)
} else {
  console.error('usage: circuit-peer.mjs listen <relay> | dial <circuit addr> <sizes> |'
    + ' hold <circuit addr> <ms> | reconnect <relay> <times> | reserve <relay>')
  process.exit(2)
}
