// AutoTLS browser check (relay/.../AutoTlsIT): an https page dials the relay's advertised
// `/ip4/<ip>/tcp/<port>/tls/sni/<ip-label>.<zone>/ws` address, i.e. `wss://<ip-label>.<zone>:<port>`
// with the certificate the relay obtained by itself.
//
//   autotls.html?relay=<multiaddr>
//     Reports {event:'connected', remotePeer, remoteAddr, secure} once the connection is up.
import { fail, log, multiaddr, params, report, startPeer, status } from './lib/peer.js'

try {
  const relay = params.get('relay')
  const { libp2p } = await startPeer()
  log(`dialling ${relay}`)
  const connection = await libp2p.dial(multiaddr(relay))
  status(`connected to ${connection.remotePeer}`, 'done')
  report({
    event: 'connected',
    remotePeer: connection.remotePeer.toString(),
    remoteAddr: connection.remoteAddr.toString(),
    secure: isSecureContext
  })
} catch (err) {
  fail(err)
}
