// A js-libp2p 3 peer on QUIC only (@chainsafe/libp2p-quic) for the Java host's QUIC interop test.
//
//   quic-peer.mjs dial <multiaddr>   dial, wait for identify, ping 3 times, print one JSON result
//   quic-peer.mjs listen [seconds]   listen on /ip4/127.0.0.1/udp/0/quic-v1 (identify and ping
//                                    answered); print {"event":"listening",...}, then one line
//                                    per identify; exit when stdin closes or after [seconds]
// Output is JSON on stdout, one object per line; diagnostics go to stderr.
import { createLibp2p } from 'libp2p'
import { quic } from '@chainsafe/libp2p-quic'
import { identify } from '@libp2p/identify'
import { ping } from '@libp2p/ping'
import { multiaddr } from '@multiformats/multiaddr'

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

async function node (listen) {
  return createLibp2p({
    addresses: { listen: listen ? ['/ip4/127.0.0.1/udp/0/quic-v1'] : [] },
    transports: [quic()],
    services: { identify: identify(), ping: ping() }
  })
}

function identified (node, peer) {
  return new Promise((resolve) => {
    const listener = (evt) => {
      if (evt.detail.peerId.equals(peer)) {
        node.removeEventListener('peer:identify', listener)
        resolve(evt.detail)
      }
    }
    node.addEventListener('peer:identify', listener)
  })
}

const [mode, arg] = process.argv.slice(2)
if (mode === 'dial') {
  const target = multiaddr(arg)
  const libp2p = await node(false)
  const connection = await libp2p.dial(target)
  const info = await Promise.race([
    identified(libp2p, connection.remotePeer),
    new Promise((resolve, reject) => setTimeout(() => reject(new Error('no identify')), 10000))
  ])
  const rtts = []
  for (let i = 0; i < 3; i++) rtts.push(await libp2p.services.ping.ping(target))
  out({
    event: 'result',
    peerId: connection.remotePeer.toString(),
    agentVersion: info.agentVersion,
    protocols: info.protocols,
    listenAddrs: info.listenAddrs.map(String),
    rtts
  })
  await libp2p.stop()
  process.exit(0)
} else if (mode === 'listen') {
  const libp2p = await node(true)
  libp2p.addEventListener('peer:identify', (evt) => {
    out({ event: 'identify', peerId: evt.detail.peerId.toString(), agentVersion: evt.detail.agentVersion })
  })
  out({ event: 'listening', peerId: libp2p.peerId.toString(), addrs: libp2p.getMultiaddrs().map(String) })
  const stop = async () => { await libp2p.stop(); process.exit(0) }
  process.stdin.on('end', stop)
  process.stdin.resume()
  setTimeout(stop, Number(arg ?? 120) * 1000)
} else {
  console.error('usage: quic-peer.mjs dial <multiaddr> | listen [seconds]')
  process.exit(2)
}
