// A js-libp2p peer running @libp2p/pubsub-peer-discovery over gossipsub, for the Java relay's
// interop tests (run it with the stack's folder as the working directory). It dials the relay
// only, announces itself every second on <topic> with a made-up public address (so announcements
// carry something to check), and prints {"event":"discovered","peer":...,"addrs":[...]} the first
// time the discovery module reports a peer. Exits when stdin closes.
//
//   discovery-peer.mjs <relay multiaddr> <topic>
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const [relay, topic] = process.argv.slice(2)
// The discovery module's own 'peer' events: libp2p's peer:discovery fires only for peers new to
// its peer store, and the relay is known already (we dialled it).
const seen = new Set()
const discovery = (components) => {
  const service = deps.pubsubPeerDiscovery({ interval: 1000, topics: [topic] })(components)
  service.addEventListener('peer', (event) => {
    const id = event.detail.id.toString()
    if (seen.has(id)) return
    seen.add(id)
    out({ event: 'discovered', peer: id, addrs: event.detail.multiaddrs.map(String) })
  })
  return service
}
const node = await deps.createLibp2p({
  addresses: { announce: ['/ip4/198.51.100.' + (1 + Math.floor(Math.random() * 200)) + '/tcp/4001'] },
  transports: [deps.tcp()],
  connectionEncrypters: [deps.noise()],
  streamMuxers: [deps.yamux()],
  peerDiscovery: [discovery],
  services: {
    identify: deps.identify(),
    identifyPush: deps.identifyPush(),
    pubsub: deps.gossipsub({ allowPublishToZeroTopicPeers: true, emitSelf: false })
  }
})

await node.dial(deps.multiaddr(relay))
out({ event: 'started', stack: deps.stack, peerId: node.peerId.toString(), addrs: node.getMultiaddrs().map(String) })
process.stdin.on('end', async () => { await node.stop(); process.exit(0) })
process.stdin.resume()
