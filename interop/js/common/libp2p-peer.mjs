// A js-libp2p peer for the Java relay's interop tests, shared by stack A and stack B: run it with
// the stack's folder as the working directory (`cd interop/js/stack-b && node ../common/libp2p-peer.mjs ...`),
// so ./deps.mjs picks that stack's packages.
//
//   libp2p-peer.mjs dial <multiaddr> [pings]   dial, wait for identify, ping, print one JSON result
//   libp2p-peer.mjs listen [seconds]           listen on 127.0.0.1 (tcp and ws) and answer the echo
//                                              protocol; print JSON lines: {"event":"listening",...}
//                                              then one per identify / connection event; exit when
//                                              stdin closes or after [seconds] (default 120)
//   libp2p-peer.mjs echo-client <multiaddr> <streams> <bytes>
//                                              dial, wait for identify, then open <streams> echo
//                                              streams at once, each sending <bytes> random bytes and
//                                              checking that the same bytes come back; one JSON result
// Output is JSON on stdout, one object per line; diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { createHash, randomBytes } from 'node:crypto'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

// A test protocol: everything received on a stream is sent back; the answer ends when the
// request does (half-close).
const ECHO = '/relay-pinner/echo/1.0.0'
const CHUNK = 64 * 1024
const v3 = deps.libp2pVersion === 3
const STREAM_LIMITS = { maxInboundStreams: 256, maxOutboundStreams: 256 }

function bytesOf (chunk) {
  return chunk instanceof Uint8Array ? chunk : chunk.subarray()
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
    }, STREAM_LIMITS)
  } else {
    await node.handle(ECHO, async ({ stream }) => {
      await stream.sink(stream.source)
    }, STREAM_LIMITS)
  }
}

async function echoRoundTrip (node, target, size) {
  const data = randomBytes(size)
  const want = createHash('sha256').update(data).digest('hex')
  const got = createHash('sha256')
  let received = 0
  const stream = await node.dialProtocol(target, ECHO, STREAM_LIMITS)
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

async function echoClient (target, streams, size) {
  const node = await createNode(false)
  const identified = new Promise((resolve) => node.addEventListener('peer:identify', resolve))
  const ma = deps.multiaddr(target)
  await node.dial(ma)
  // Open the burst only once both sides are fully set up (js-libp2p 3 aborts a connection on
  // more than 10 streams that arrive before its connection object exists).
  await identified
  const started = Date.now()
  await Promise.all(Array.from({ length: streams }, () => echoRoundTrip(node, ma, size)))
  out({ ok: true, streams, bytes: size, ms: Date.now() - started })
  await node.stop()
}

async function createNode (listen) {
  return deps.createLibp2p({
    addresses: { listen: listen ? ['/ip4/127.0.0.1/tcp/0', '/ip4/127.0.0.1/tcp/0/ws'] : [] },
    transports: [deps.tcp(), deps.webSockets()],
    connectionEncrypters: [deps.noise()],
    streamMuxers: [deps.yamux()],
    services: {
      identify: deps.identify(),
      identifyPush: deps.identifyPush(),
      ping: deps.ping()
    }
  })
}

function describeIdentify (detail) {
  return {
    peerId: detail.peerId.toString(),
    agentVersion: detail.agentVersion,
    protocolVersion: detail.protocolVersion,
    protocols: [...detail.protocols].sort(),
    listenAddrs: detail.listenAddrs.map(String),
    observedAddr: detail.observedAddr == null ? null : String(detail.observedAddr)
  }
}

async function dial (target, pings) {
  const node = await createNode(false)
  const identified = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no identify within 10 s')), 10_000)
    node.addEventListener('peer:identify', (event) => {
      clearTimeout(timer)
      resolve(describeIdentify(event.detail))
    })
  })
  const started = Date.now()
  const connection = await node.dial(deps.multiaddr(target))
  const identify = await identified
  const rtts = []
  for (let i = 0; i < pings; i++) {
    rtts.push(await node.services.ping.ping(deps.multiaddr(target)))
  }
  out({
    stack: deps.stack,
    peerId: node.peerId.toString(),
    remotePeer: connection.remotePeer.toString(),
    remoteAddr: String(connection.remoteAddr),
    multiplexer: connection.multiplexer,
    encryption: connection.encryption,
    connectMs: Date.now() - started,
    identify,
    rtts
  })
  await node.stop()
}

async function listen (seconds) {
  const node = await createNode(true)
  await handleEcho(node)
  node.addEventListener('peer:identify', (event) => {
    out({ event: 'identify', identify: describeIdentify(event.detail) })
  })
  node.addEventListener('connection:open', (event) => {
    const c = event.detail
    out({ event: 'connection:open', remotePeer: c.remotePeer.toString(), remoteAddr: String(c.remoteAddr),
      multiplexer: c.multiplexer, encryption: c.encryption })
  })
  node.addEventListener('connection:close', (event) => {
    out({ event: 'connection:close', remotePeer: event.detail.remotePeer.toString() })
  })
  out({ event: 'listening', stack: deps.stack, peerId: node.peerId.toString(),
    addrs: node.getMultiaddrs().map(String) })
  const stop = async () => { await node.stop(); process.exit(0) }
  process.stdin.on('end', stop)
  process.stdin.resume()
  setTimeout(stop, seconds * 1000)
}

const [mode, arg, extra] = process.argv.slice(2)
if (mode === 'dial') {
  await dial(arg, Number(extra ?? 3))
  process.exit(0)
} else if (mode === 'echo-client') {
  await echoClient(arg, Number(extra), Number(process.argv[5]))
  process.exit(0)
} else if (mode === 'listen') {
  await listen(Number(arg ?? 120))
} else {
  console.error('usage: libp2p-peer.mjs dial <multiaddr> [pings] | listen [seconds] |'
    + ' echo-client <multiaddr> <streams> <bytes>')
  process.exit(2)
}
