// Preloaded with `node --import ../common/autotls-dns.mjs` by the AutoTLS interop test: resolves
// host names whose first label is a dashed IPv4 address (`127-0-0-1.<peer id>.<domain>`) to that
// address, as the libp2p.direct DNS (p2p-forge) does, so that a `/tls/sni/<label>.<zone>/ws`
// address dials on a machine without that DNS. Every other name goes to the system resolver.
import dns from 'node:dns'

const LABEL = /^(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})\./

function mapped (hostname) {
  const m = LABEL.exec(String(hostname))
  return m == null ? null : `${m[1]}.${m[2]}.${m[3]}.${m[4]}`
}

const original = dns.lookup
dns.lookup = function lookup (hostname, options, callback) {
  const ip = mapped(hostname)
  if (ip == null) return original.call(dns, hostname, options, callback)
  const cb = typeof options === 'function' ? options : callback
  const all = typeof options === 'object' && options != null && options.all === true
  process.nextTick(() => all ? cb(null, [{ address: ip, family: 4 }]) : cb(null, ip, 4))
}
const originalPromise = dns.promises.lookup
dns.promises.lookup = async function lookup (hostname, options) {
  const ip = mapped(hostname)
  if (ip == null) return originalPromise.call(dns.promises, hostname, options)
  return options != null && options.all === true ? [{ address: ip, family: 4 }] : { address: ip, family: 4 }
}
