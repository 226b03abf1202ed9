// Browser E2E 2 (relay/.../BrowserWebRtcE2eIT): two pages, each in its own browser, that can
// reach only the relay. Each makes a circuit relay v2 reservation on the relay, announces its
// addresses with pubsub peer discovery on `topic` (which the relay forwards), and dials the
// other page's `/p2p-circuit/webrtc` address as soon as it is discovered (only the page with
// the smaller peer id dials, so there is one connection): the relayed connection carries the
// WebRTC signalling, then the data flows over the direct WebRTC connection.
//
//   live.html?role=A|B&relay=<multiaddr>&topic=<discovery topic>
//     Reports {event:'reserved', peerId, addrs} once its /p2p-circuit address exists and
//     {event:'direct', peer, remoteAddr} once it has a WebRTC connection to the other page.
//   The test then calls, through eval:
//     createDatabase()               (A) a new `events` database; returns its address
//     openDatabase(address, count)   (B) opens it and reports {event:'replicated', ...} once it
//                                    holds `count` entries (see below)
//     subscribers()                  (A) peers subscribed to the database topic, as A sees them
//     write(count)                   (A) writes `count` entries while B has the database open
//   'replicated' says which connection carried the data: for every pubsub message B got on the
//   database topic, the peer that sent it to B (gossipsub's propagation source) and that
//   connection's address; B's connections; and the bytes B's RTCPeerConnections received
//   (WebRTC stats of the selected ICE candidate pair).
import { ownAddresses, rtcStats } from './lib/rtc-capture.js'
import { createOrbitDB } from '@orbitdb/core'
import { connections, fail, log, multiaddr, params, report, startPeer, status } from './lib/peer.js'

const role = params.get('role')
const relay = params.get('relay')
const topic = params.get('topic')
document.getElementById('role').textContent = role
const facts = (text) => { document.getElementById('facts').textContent += text + '\n' }

const machine = await ownAddresses
const { libp2p, helia } = await startPeer({ browserToBrowser: true, discoveryTopics: [topic] })
facts(`peer ${libp2p.peerId}`)
facts(`this machine's ICE host addresses ${[...machine].join(' ')}`)
let relayPeer = null
let db = null

function circuitAddrs () {
  return libp2p.getMultiaddrs().map(String).filter((a) => a.includes('/p2p-circuit'))
}

async function dialDirect (peerId, addrs) {
  const webrtc = addrs.find((a) => a.includes('/p2p-circuit/webrtc'))
  if (webrtc == null) return
  if (libp2p.getConnections(peerId).some((c) => c.remoteAddr.toString().includes('/webrtc'))) return
  // The WebRTC offer and answer travel over the relayed connection; on a loaded machine the
  // signalling can time out, and discovery does not announce the peer again: try a few times.
  for (let attempt = 1; attempt <= 4; attempt++) {
    if (libp2p.getConnections(peerId).some((c) => c.remoteAddr.toString().includes('/webrtc'))) return
    log(`dialling ${webrtc}${attempt > 1 ? ` (attempt ${attempt})` : ''}`)
    try {
      const connection = await libp2p.dial(multiaddr(webrtc))
      log(`connected over ${connection.remoteAddr}`)
      return
    } catch (err) {
      log(`dial ${webrtc} failed: ${err?.message ?? err}`)
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  }
}

libp2p.addEventListener('peer:discovery', (event) => {
  const { id, multiaddrs } = event.detail
  if (relayPeer != null && id.equals(relayPeer)) return
  const addrs = multiaddrs.map(String)
  log(`discovered ${id}: ${addrs.join(' ')}`)
  // One side dials, so there is one direct connection.
  if (libp2p.peerId.toString() < id.toString()) dialDirect(id, addrs)
})

libp2p.addEventListener('connection:open', (event) => {
  const c = event.detail
  log(`connection open ${c.remoteAddr}${c.limits != null ? ' (limited)' : ''}`)
  if (c.remoteAddr.toString().includes('/webrtc')) {
    status(`direct WebRTC connection to ${c.remotePeer}`)
    facts(`direct ${c.remoteAddr}`)
    report({ event: 'direct', peer: c.remotePeer.toString(), remoteAddr: c.remoteAddr.toString() })
  }
})

// Every message B gets on the database topic, with the peer that forwarded it.
const received = []
libp2p.services.pubsub.addEventListener('gossipsub:message', (event) => {
  const { propagationSource, msg } = event.detail
  if (db == null || msg.topic !== db.address.toString()) return
  const via = libp2p.getConnections(propagationSource)
    .filter((c) => c.limits == null).map((c) => c.remoteAddr.toString())
  received.push({ from: propagationSource.toString(), via })
})

globalThis.createDatabase = async () => {
  const orbitdb = await createOrbitDB({ ipfs: helia, id: `page-${role}`, directory: `./orbitdb-${role}` })
  const name = `browser-live-${Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, '0')).join('')}`
  db = await orbitdb.open(name, { type: 'events' })
  db.events.on('error', (err) => log(`db error ${err?.stack ?? err}`))
  facts(`database ${db.address}`)
  return db.address.toString()
}

globalThis.write = async (count) => {
  for (let i = 0; i < count; i++) {
    const text = `live entry ${i + 1} from ${role}`
    await db.add({ text })
    const li = document.createElement('li')
    li.textContent = text
    document.getElementById('entries').append(li)
  }
  status(`wrote ${count} entries`, 'done')
  return count
}

globalThis.openDatabase = async (address, count) => {
  const orbitdb = await createOrbitDB({ ipfs: helia, id: `page-${role}`, directory: `./orbitdb-${role}` })
  db = await orbitdb.open(address)
  db.events.on('error', (err) => log(`db error ${err?.stack ?? err}`))
  facts(`database ${address}`)
  const started = performance.now()
  ;(async () => {
    try {
      let all = await db.all()
      while (all.length < count) {
        status(`replicating: ${all.length} of ${count}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
        all = await db.all()
      }
      for (const e of all) {
        const li = document.createElement('li')
        li.textContent = e.value.text
        document.getElementById('entries').append(li)
      }
      status(`replicated ${all.length} entries live`, 'done')
      const rtc = await rtcStats()
      const senders = [...new Set(received.map((m) => `${m.from} via ${m.via.join(', ')}`))]
      facts(`${received.length} pubsub messages on the database topic from ${senders.join('; ')}`)
      for (const pair of rtc) facts(`WebRTC ${pair.local} <- ${pair.remote}: ${pair.bytesReceived} bytes received`)
      report({
        event: 'replicated',
        entries: all.map((e) => e.value.text),
        ms: Math.round(performance.now() - started),
        messages: received,
        connections: connections(libp2p),
        rtc
      })
    } catch (err) {
      fail(err)
    }
  })()
  return address
}

/** The peers A knows to be subscribed to the database topic (A writes once B is among them). */
globalThis.subscribers = () => libp2p.services.pubsub.getSubscribers(db.address.toString()).map(String)

globalThis.snapshot = async () => ({ connections: connections(libp2p), rtc: await rtcStats(), addrs: libp2p.getMultiaddrs().map(String) })

try {
  status(`dialling the relay ${relay}`)
  facts(`relay ${relay}`)
  const connection = await libp2p.dial(multiaddr(relay))
  relayPeer = connection.remotePeer
  log(`connected to the relay ${connection.remoteAddr}`)
  status('waiting for a reservation on the relay')
  while (circuitAddrs().length === 0) {
    await new Promise((resolve) => libp2p.addEventListener('self:peer:update', resolve, { once: true }))
  }
  facts(`reserved ${circuitAddrs().join(' ')}`)
  status('reserved; looking for the other page')
  report({ event: 'reserved', peerId: libp2p.peerId.toString(), addrs: libp2p.getMultiaddrs().map(String) })
} catch (err) {
  fail(err)
}
