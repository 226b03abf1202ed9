// A js-libp2p 3 relay for checking the browser pages by hand (not used by the Java tests, whose
// relay is relay-pinner): WebSockets on 127.0.0.1, circuit relay v2 server, identify, gossipsub
// and pubsub peer discovery on the given topic. Prints {"event":"ready", addrs}.
//   js-relay.mjs <topic>
import { noise } from '@libp2p/noise'
import { yamux } from '@libp2p/yamux'
import { circuitRelayServer } from '@libp2p/circuit-relay-v2'
import { gossipsub } from '@libp2p/gossipsub'
import { identify } from '@libp2p/identify'
import { pubsubPeerDiscovery } from '@libp2p/pubsub-peer-discovery'
import { webSockets } from '@libp2p/websockets'
import { createLibp2p } from 'libp2p'

const topic = process.argv[2] ?? 'todo._peer-discovery._p2p._pubsub'
const libp2p = await createLibp2p({
  addresses: { listen: ['/ip4/127.0.0.1/tcp/0/ws'] },
  transports: [webSockets()],
  connectionEncrypters: [noise()],
  streamMuxers: [yamux()],
  peerDiscovery: [pubsubPeerDiscovery({ interval: 1000, topics: [topic] })],
  services: {
    identify: identify(),
    relay: circuitRelayServer(),
    pubsub: gossipsub({ allowPublishToZeroTopicPeers: true })
  }
})
process.stdout.write(JSON.stringify({ event: 'ready', addrs: libp2p.getMultiaddrs().map(String) }) + '\n')
process.stdin.on('end', async () => { await libp2p.stop(); process.exit(0) })
process.stdin.resume()
