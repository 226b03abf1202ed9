// Many js-libp2p gossipsub peers in one Node process, all dialling one relay from 127.0.0.1 (as
// browsers behind one proxy or NAT address do), for the Java relay's "many peers behind one IP"
// test. Stack-agnostic: run it with a stack's folder as the working directory
// (`cd interop/js/stack-b && node ../common/many-subscribers.mjs ...`), so ./deps.mjs picks that
// stack's packages, and each peer runs that stack's gossipsub defaults (plus
// allowPublishToZeroTopicPeers, emitSelf: false). Only TCP, Noise, Yamux, identify and gossipsub:
// about 3 MB of heap per peer.
//
//   many-subscribers.mjs <topic> --dial <multiaddr> [options]
//     --peers <n>        peers to start (default 100), 10 at a time
//     --seconds <s>      exit after s seconds (default 120); also exits when stdin closes
//
// Every peer subscribes to <topic> before it dials. Prints JSON lines on stdout:
//   {"event":"ready",peers:[peerId...],ms}  (ms after start) every peer is connected and has seen the relay's
//       subscription to <topic> (the relay's peer id is the one in --dial)
//   {"event":"message",peer:<index>,topic,from,data}  one per message a peer receives
//   {"event":"published",peer:<index>}, {"event":"stats",...} answers to the commands below
// Commands on stdin, one per line:
//   publish <index> <text>  peer <index> publishes <text> on <topic>
//   stats                   {"event":"stats",connected:[...],meshWithRelay:n,received:[...]}:
//                           per peer whether it is still connected to the relay, how many peers
//                           have the relay in their mesh, messages received per peer
// Diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const args = process.argv.slice(2)
const topic = args[0]
const option = (name) => {
  const i = args.indexOf(name)
  return i < 0 ? undefined : args[i + 1]
}
const target = option('--dial')
if (topic == null || topic.startsWith('--') || target == null) {
  console.error('usage: many-subscribers.mjs <topic> --dial <multiaddr> [--peers <n>]'
    + ' [--seconds <s>]')
  process.exit(2)
}
const count = Number(option('--peers') ?? 100)
const seconds = Number(option('--seconds') ?? 120)
const relayAddr = deps.multiaddr(target)
const relayId = target.split('/p2p/').pop()

const began = Date.now()
const nodes = []
const received = []
const start = async (index) => {
  const node = await deps.createLibp2p({
    addresses: { listen: [] },
    transports: [deps.tcp()],
    connectionEncrypters: [deps.noise()],
    streamMuxers: [deps.yamux()],
    services: {
      identify: deps.identify(),
      pubsub: deps.gossipsub({ allowPublishToZeroTopicPeers: true, emitSelf: false })
    }
  })
  const pubsub = node.services.pubsub
  received[index] = 0
  pubsub.addEventListener('message', (event) => {
    const msg = event.detail
    received[index]++
    out({ event: 'message', peer: index, topic: msg.topic,
      from: msg.type === 'signed' ? msg.from.toString() : null,
      data: Buffer.from(msg.data).toString('utf8') })
  })
  pubsub.subscribe(topic)
  await node.dial(relayAddr)
  nodes[index] = node
}

for (let from = 0; from < count; from += 10) {
  const batch = []
  for (let i = from; i < Math.min(count, from + 10); i++) batch.push(start(i))
  await Promise.all(batch)
}
const seesRelay = (node) => node.services.pubsub.getSubscribers(topic).map(String).includes(relayId)
while (!nodes.every(seesRelay)) await new Promise((resolve) => setTimeout(resolve, 100))
out({ event: 'ready', peers: nodes.map((node) => node.peerId.toString()),
  ms: Date.now() - began })

const stop = async () => {
  await Promise.allSettled(nodes.map((node) => node.stop()))
  process.exit(0)
}
const commands = createInterface({ input: process.stdin })
commands.on('line', async (line) => {
  const [command, index, ...rest] = line.trim().split(' ')
  try {
    if (command === 'publish') {
      await nodes[Number(index)].services.pubsub.publish(topic,
        new TextEncoder().encode(rest.join(' ')))
      out({ event: 'published', peer: Number(index) })
    } else if (command === 'stats') {
      out({ event: 'stats',
        connected: nodes.map((node) => node.getConnections().some(
          (c) => c.remotePeer.toString() === relayId)),
        meshWithRelay: nodes.filter((node) => node.services.pubsub.getMeshPeers(topic)
          .map(String).includes(relayId)).length,
        received })
    } else if (command !== '') {
      console.error('unknown command', line)
    }
  } catch (err) {
    console.error('command failed', line, err)
    out({ event: 'error', command: line, error: String(err) })
  }
})
commands.on('close', stop)
setTimeout(stop, seconds * 1000)
