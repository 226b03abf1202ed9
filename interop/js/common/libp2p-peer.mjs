// A js-libp2p peer for the Java relay's interop tests, shared by stack A and stack B: run it with
// the stack's folder as the working directory (`cd interop/js/stack-b && node ../common/libp2p-peer.mjs ...`),
// so ./deps.mjs picks that stack's packages.
//
//   libp2p-peer.mjs dial <multiaddr> [pings]   dial, wait for identify, ping, print one JSON result
//   libp2p-peer.mjs listen [seconds]           listen on 127.0.0.1 (tcp and ws); print JSON lines:
//                                              {"event":"listening",...} then one per identify /
//                                              connection event; exit when stdin closes or after
//                                              [seconds] (default 120)
// Output is JSON on stdout, one object per line; diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

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
} else if (mode === 'listen') {
  await listen(Number(arg ?? 120))
} else {
  console.error('usage: libp2p-peer.mjs dial <multiaddr> [pings] | listen [seconds]')
  process.exit(2)
}
