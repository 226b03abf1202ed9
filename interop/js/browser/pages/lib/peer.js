// What every test page shares: a Helia 7 node for the browser with its js-libp2p 3 (the stack-C
// generation; Helia builds libp2p from the page's config, like interop/js/common/helia-node.mjs:
// no HTTP routers, recursive gateways or bootstrap peers, which reach for the public network), a
// status area on the page, and the link to the test (the driver exposes `relayTestReport`; see
// driver.mjs).
import { createHelia } from 'helia'
import { noise } from '@libp2p/noise'
import { yamux } from '@libp2p/yamux'
import { circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { gossipsub } from '@libp2p/gossipsub'
import { identify, identifyPush } from '@libp2p/identify'
import { pubsubPeerDiscovery } from '@libp2p/pubsub-peer-discovery'
import { webRTC } from '@libp2p/webrtc'
import { webSockets } from '@libp2p/websockets'
import { multiaddr } from '@multiformats/multiaddr'
import { MemoryBlockstore } from 'blockstore-core'
import { MemoryDatastore } from 'datastore-core'

export { multiaddr }

export const params = new URLSearchParams(location.search)

/** Sends one result object to the Java test (ignored when the page is opened by hand). */
export function report (data) {
  if (typeof globalThis.relayTestReport === 'function') globalThis.relayTestReport(data)
}

const logArea = () => document.getElementById('log')

/** One line in the page's log area (and the console). */
export function log (text) {
  const line = `${new Date().toISOString().slice(11, 23)} ${text}`
  console.log(line)
  const area = logArea()
  if (area) area.textContent += line + '\n'
}

/** Sets the page's headline status (what the screenshot shows first). */
export function status (text, state = 'running') {
  const el = document.getElementById('status')
  if (el) {
    el.textContent = text
    el.dataset.state = state
  }
}

/** Reports an error to the test and shows it; returns nothing so callers can `return fail(e)`. */
export function fail (err) {
  // Not every failure is an Error: a WebSocket failure rejects with an Event.
  const message = err instanceof Error ? String(err.stack ?? err) : `${err?.type ?? ''} ${String(err)}`.trim()
  log(`ERROR ${message}`)
  status(`failed: ${err?.message ?? err?.type ?? err}`, 'failed')
  report({ event: 'error', message })
}

/**
 * A libp2p node that dials out only (browsers cannot listen) over WebSockets, with Noise, yamux,
 * identify and gossipsub; with `browserToBrowser` also the circuit relay v2 transport (a
 * reservation on the relay, advertised as `/p2p-circuit`), WebRTC (`/webrtc`, upgraded from a
 * relayed connection) and pubsub peer discovery on `discoveryTopics`.
 */
export async function startPeer ({ browserToBrowser = false, discoveryTopics = [] } = {}) {
  const transports = [webSockets()]
  const listen = []
  const peerDiscovery = []
  if (browserToBrowser) {
    transports.push(circuitRelayTransport(), webRTC({
      // Loopback only: no STUN server; host candidates on 127.0.0.1 (see docs/interop.md).
      rtcConfiguration: { iceServers: [] }
    }))
    listen.push('/p2p-circuit', '/webrtc')
    peerDiscovery.push(pubsubPeerDiscovery({ interval: 1000, topics: discoveryTopics, listenOnly: false }))
  }
  const helia = createHelia({
    libp2p: {
      addresses: { listen },
      transports,
      connectionEncrypters: [noise()],
      streamMuxers: [yamux()],
      // Browsers deny private addresses and plain /ws by default; the test relay is on loopback.
      connectionGater: { denyDialMultiaddr: () => false },
      peerDiscovery,
      services: {
        identify: identify(),
        identifyPush: identifyPush(),
        pubsub: gossipsub({ allowPublishToZeroTopicPeers: true })
      }
    },
    blockstore: new MemoryBlockstore(),
    datastore: new MemoryDatastore(),
    http: { delegatedRouters: [], recursiveGateways: [] }
  })
  await helia.start()
  const libp2p = helia.libp2p
  log(`peer ${libp2p.peerId}`)
  return { libp2p, helia }
}

/** SHA-256 of bytes as lower-case hex (WebCrypto: the pages are secure contexts). */
export async function sha256Hex (bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
}

/** Every open connection: peer, address, whether limited (relayed), and its streams' protocols. */
export function connections (libp2p) {
  return libp2p.getConnections().map((c) => ({
    peer: c.remotePeer.toString(),
    remoteAddr: c.remoteAddr.toString(),
    limited: c.limits != null,
    direction: c.direction,
    streams: c.streams.map((s) => s.protocol).filter(Boolean)
  }))
}
