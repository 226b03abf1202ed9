// A js-libp2p gossipsub peer for the Java relay's pubsub interop tests, shared by stack A and
// stack B: run it with the stack's folder as the working directory
// (`cd interop/js/stack-b && node ../common/pubsub-peer.mjs ...`), so ./deps.mjs picks that
// stack's packages. Gossipsub runs under the services key `pubsub` with the relay's settings
// (allowPublishToZeroTopicPeers: true, emitSelf: false, default StrictSign).
//
//   pubsub-peer.mjs <topic> [options]
//     --listen              listen on 127.0.0.1 (tcp)
//     --dial <multiaddr>    dial this peer
//     --publish <n>         publish n messages "<stack>-<i>" on <topic> once --to is in our mesh
//     --to <peerId>         the peer whose mesh membership triggers publishing
//     --pad <chars>         pad each published text with '.' to this length (IDONTWANT >= 512)
//     --seconds <s>         exit after s seconds (default 120); also exits when stdin closes
//
// Prints JSON lines on stdout: {"event":"ready",peerId,addrs}, then
// {"event":"subscription-change",peer,topic,subscribed}, {"event":"message",topic,from,data,
// seqno,at (arrival time, epoch ms)}, {"event":"mesh",peer} (first time --to joins our mesh) and {"event":"published",count}.
// Diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const args = process.argv.slice(2)
const topic = args[0]
const option = (name) => {
  const i = args.indexOf(name)
  return i < 0 ? undefined : args[i + 1]
}
if (topic == null || topic.startsWith('--')) {
  console.error('usage: pubsub-peer.mjs <topic> [--listen] [--dial <multiaddr>]'
    + ' [--publish <n> --to <peerId>] [--seconds <s>]')
  process.exit(2)
}
const listen = args.includes('--listen')
const target = option('--dial')
const publishCount = Number(option('--publish') ?? 0)
const to = option('--to')
const seconds = Number(option('--seconds') ?? 120)
const pad = Number(option('--pad') ?? 0)

const node = await deps.createLibp2p({
  addresses: { listen: listen ? ['/ip4/127.0.0.1/tcp/0'] : [] },
  transports: [deps.tcp()],
  connectionEncrypters: [deps.noise()],
  streamMuxers: [deps.yamux()],
  services: {
    identify: deps.identify(),
    identifyPush: deps.identifyPush(),
    ping: deps.ping(),
    pubsub: deps.gossipsub({ allowPublishToZeroTopicPeers: true, emitSelf: false })
  }
})
const pubsub = node.services.pubsub

pubsub.addEventListener('subscription-change', (event) => {
  for (const sub of event.detail.subscriptions) {
    out({ event: 'subscription-change', peer: event.detail.peerId.toString(), topic: sub.topic,
      subscribed: sub.subscribe })
  }
})
pubsub.addEventListener('message', (event) => {
  const msg = event.detail
  out({ event: 'message', topic: msg.topic, from: msg.type === 'signed' ? msg.from.toString() : null,
    data: Buffer.from(msg.data).toString('utf8'),
    seqno: msg.sequenceNumber == null ? null : msg.sequenceNumber.toString(16).padStart(16, '0'),
    at: Date.now() })
})
pubsub.subscribe(topic)

out({ event: 'ready', stack: deps.stack, peerId: node.peerId.toString(),
  addrs: node.getMultiaddrs().map(String) })

if (target != null) {
  await node.dial(deps.multiaddr(target))
}

if (publishCount > 0 && to != null) {
  // Publish only once the peer is in our mesh: then our outbound stream to it exists and it has
  // our subscription, so nothing depends on publish racing stream setup.
  const inMesh = () => pubsub.getMeshPeers(topic).map(String).includes(to)
  while (!inMesh()) await new Promise((resolve) => setTimeout(resolve, 100))
  out({ event: 'mesh', peer: to })
  for (let i = 0; i < publishCount; i++) {
    await pubsub.publish(topic, new TextEncoder().encode(`${deps.stack}-${i}`.padEnd(pad, '.')))
  }
  out({ event: 'published', count: publishCount })
}

const stop = async () => { await node.stop(); process.exit(0) }
process.stdin.on('end', stop)
process.stdin.resume()
setTimeout(stop, seconds * 1000)
