// Keeps every RTCPeerConnection the page makes, to read their WebRTC stats later, and keeps
// WebRTC on this machine: remote ICE candidates whose address is not one of this machine's own
// host candidate addresses are dropped, so the pages' connectivity checks and data only ever go
// to an address of this machine (the kernel delivers them locally). Headless Chromium on Linux
// offers no loopback candidates (it skips loopback interfaces when listing networks), so the
// machine's interface addresses are what two pages on one machine connect over. Import this
// module before anything that imports @libp2p/webrtc (which takes the constructor when it
// loads), and await `ownAddresses` before making connections.
export const peerConnections = []
const NativeRTCPeerConnection = globalThis.RTCPeerConnection

const candidateAddress = (text) => text.split(' ')[4]

/** This machine's host candidate addresses, gathered once by a throw-away connection. */
export const ownAddresses = (async () => {
  const pc = new NativeRTCPeerConnection({ iceServers: [] })
  pc.createDataChannel('probe')
  const found = new Set()
  const done = new Promise((resolve) => {
    pc.addEventListener('icecandidate', (event) => {
      if (event.candidate == null) resolve()
      else if (event.candidate.candidate) found.add(candidateAddress(event.candidate.candidate))
    })
    setTimeout(resolve, 5000)
  })
  await pc.setLocalDescription(await pc.createOffer())
  await done
  pc.close()
  return found
})()
let own = new Set()
ownAddresses.then((set) => { own = set })

globalThis.RTCPeerConnection = class extends NativeRTCPeerConnection {
  constructor (...args) {
    super(...args)
    peerConnections.push(this)
  }

  addIceCandidate (candidate, ...rest) {
    const text = candidate?.candidate ?? ''
    if (text !== '' && !own.has(candidateAddress(text))) return Promise.resolve()
    return super.addIceCandidate(candidate, ...rest)
  }
}

/**
 * For each connection: the candidate pair that carried the most bytes (the selected pair when
 * none did yet), its addresses and byte counts. Not only the selected pair: ICE may nominate
 * another pair after the data crossed the first one, and the new pair then shows 0 bytes until
 * more traffic comes.
 */
export async function rtcStats () {
  const out = []
  for (const pc of peerConnections) {
    const stats = await pc.getStats()
    let selected = null
    stats.forEach((s) => {
      if (s.type === 'transport' && s.selectedCandidatePairId) selected = stats.get(s.selectedCandidatePairId) ?? selected
    })
    stats.forEach((s) => {
      if (s.type === 'candidate-pair' && (s.bytesReceived ?? 0) > 0 &&
        (selected == null || s.bytesReceived > (selected.bytesReceived ?? 0))) selected = s
    })
    if (selected == null) continue
    const local = stats.get(selected.localCandidateId)
    const remote = stats.get(selected.remoteCandidateId)
    out.push({
      state: pc.connectionState,
      pairState: selected.state,
      bytesReceived: selected.bytesReceived ?? 0,
      bytesSent: selected.bytesSent ?? 0,
      localAddress: local?.address ?? local?.ip,
      remoteAddress: remote?.address ?? remote?.ip,
      local: `${local?.address ?? local?.ip} port ${local?.port} ${local?.candidateType}`,
      remote: `${remote?.address ?? remote?.ip} port ${remote?.port} ${remote?.candidateType}`
    })
  }
  return out
}
