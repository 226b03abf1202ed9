// A local Kad-DHT of js-libp2p nodes (@libp2p/kad-dht, server mode, /ipfs/kad/1.0.0) for the Java
// DHT's interop tests. Run it with a project that exports kadDHT from its deps.mjs as the working
// directory (`cd interop/js/dht && node ../common/kad-peer.mjs ...`; stack C exports it too).
//
//   kad-peer.mjs network <nodes> [seconds]
//     starts <nodes> nodes on 127.0.0.1 (TCP), each dialled to the previous ones, and prints
//     {"event":"listening","peers":[{"id":...,"addrs":[...]}...]}; then reads commands on stdin,
//     one per line, and answers each with one JSON line:
//       connect <i> <multiaddr>     node i dials the multiaddr      -> {"event":"connected"}
//       provide <i> <cid>           node i provides the CID          -> {"event":"provided"}
//       find <i> <cid> [timeoutMs]  node i looks for providers       -> {"event":"providers","providers":[{id,addrs}]}
//       closest <i> <hexKey>        node i's closest peers lookup    -> {"event":"closest","peers":[...]}
//       table <i>                   node i's routing table size      -> {"event":"table","size":n}
//     exits when stdin closes or after [seconds] (default 120).
// Output is JSON on stdout, one object per line; diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const [command, countArg, secondsArg] = process.argv.slice(2)
if (command !== 'network') {
  console.error('usage: kad-peer.mjs network <nodes> [seconds]')
  process.exit(2)
}

async function node () {
  return deps.createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [deps.tcp()],
    connectionEncrypters: [deps.noise()],
    streamMuxers: [deps.yamux()],
    services: {
      identify: deps.identify(),
      ping: deps.ping(),
      // Loopback addresses are all there is here: keep them (the default mapper drops them).
      dht: deps.kadDHT({
        protocol: '/ipfs/kad/1.0.0',
        clientMode: false,
        peerInfoMapper: deps.passthroughMapper,
        allowQueryWithZeroPeers: true
      })
    }
  })
}

const nodes = []
for (let i = 0; i < Number(countArg); i++) {
  const n = await node()
  for (const previous of nodes.slice(-3)) {
    await n.dial(previous.getMultiaddrs()[0])
  }
  nodes.push(n)
}
const info = (peerInfo) => ({
  id: peerInfo.id.toString(),
  addrs: (peerInfo.multiaddrs ?? []).map(String)
})
out({
  event: 'listening',
  peers: nodes.map((n) => ({ id: n.peerId.toString(), addrs: n.getMultiaddrs().map(String) }))
})

async function run (line) {
  const [op, index, arg, extra] = line.trim().split(/\s+/)
  const n = nodes[Number(index)]
  try {
    if (op === 'connect') {
      await n.dial(deps.multiaddr(arg))
      out({ event: 'connected' })
    } else if (op === 'provide') {
      await n.contentRouting.provide(deps.CID.parse(arg), { signal: AbortSignal.timeout(30_000) })
      out({ event: 'provided' })
    } else if (op === 'find') {
      const providers = []
      const signal = AbortSignal.timeout(Number(extra ?? 20_000))
      try {
        for await (const p of n.contentRouting.findProviders(deps.CID.parse(arg), { signal })) {
          providers.push(info(p))
          break
        }
      } catch (err) {
        console.error('find', err.message)
      }
      out({ event: 'providers', providers })
    } else if (op === 'closest') {
      const peers = []
      const key = Uint8Array.from(Buffer.from(arg, 'hex'))
      for await (const event of n.services.dht.getClosestPeers(key,
        { signal: AbortSignal.timeout(20_000) })) {
        if (event.name === 'FINAL_PEER') peers.push(info(event.peer))
      }
      out({ event: 'closest', peers })
    } else if (op === 'table') {
      out({ event: 'table', size: n.services.dht.routingTable.size })
    } else {
      out({ event: 'error', error: 'unknown command ' + op })
    }
  } catch (err) {
    out({ event: 'error', op, error: err.message })
  }
}

const rl = createInterface({ input: process.stdin })
let queue = Promise.resolve()
rl.on('line', (line) => { queue = queue.then(() => run(line)) })
const stop = async () => {
  await Promise.allSettled(nodes.map((n) => n.stop()))
  process.exit(0)
}
rl.on('close', () => { queue.then(stop) })
setTimeout(stop, Number(secondsArg ?? 120) * 1000).unref()
