// A Helia node (bitswap only, in-memory stores) for the Java bitswap interop tests, shared by
// stack A (Helia 5 generation) and stack B (Helia 6 generation): run it with the stack's folder as
// the working directory (`cd interop/js/stack-b && node ../common/bitswap-peer.mjs ...`), so
// ./deps.mjs picks that stack's packages. Helia is built from the @helia/utils class with only
// the bitswap block broker and libp2p routing (createHelia's defaults reach for the network).
//
//   bitswap-peer.mjs [options]
//     --listen               listen on 127.0.0.1 (tcp)
//     --dial <multiaddr>     dial this peer
//     --add <file>           add the file with @helia/unixfs addBytes (raw leaves, CIDv1)
//     --chunk <bytes>        fixed chunk size for --add (default: the library's)
//     --cat <cid>            cat the file over bitswap once connected and write it to --out
//     --out <file>           where --cat writes the bytes
//     --seconds <s>          exit after s seconds (default 120); also exits when stdin closes
//
// Prints JSON lines on stdout: {"event":"ready",stack,peerId,addrs}, {"event":"added",cid,
// bytes}, {"event":"connected",peer}, {"event":"cat",cid,bytes,ms} or {"event":"error",message}.
// Diagnostics go to stderr.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { readFile, writeFile } from 'node:fs/promises'
import { heliaNode } from './helia-node.mjs'

const deps = await import(pathToFileURL(join(process.cwd(), 'deps.mjs')).href)
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
process.on('unhandledRejection', (err) => { console.error('unhandledRejection', err) })

const args = process.argv.slice(2)
const option = (name) => {
  const i = args.indexOf(name)
  return i < 0 ? undefined : args[i + 1]
}
const listen = args.includes('--listen')
const target = option('--dial')
const addFile = option('--add')
const chunk = option('--chunk')
const catCid = option('--cat')
const outFile = option('--out')
const seconds = Number(option('--seconds') ?? 120)

const { libp2p, helia } = await heliaNode(deps, {
  addresses: { listen: listen ? ['/ip4/127.0.0.1/tcp/0'] : [] },
  transports: [deps.tcp()],
  connectionEncrypters: [deps.noise()],
  streamMuxers: [deps.yamux()],
  services: { identify: deps.identify(), identifyPush: deps.identifyPush(), ping: deps.ping() }
}, { blockstore: new deps.MemoryBlockstore(), datastore: new deps.MemoryDatastore() })
const fs = deps.unixfs(helia)

const stop = async () => {
  try { await helia.stop() } catch (err) { console.error('stop', err) }
  process.exit(0)
}
process.stdin.on('end', stop)
process.stdin.resume()
setTimeout(stop, seconds * 1000)

try {
  if (addFile != null) {
    const bytes = new Uint8Array(await readFile(addFile))
    const options = { rawLeaves: true, cidVersion: 1 }
    if (chunk != null) options.chunker = deps.fixedSize({ chunkSize: Number(chunk) })
    const cid = await fs.addBytes(bytes, options)
    out({ event: 'added', cid: cid.toString(), bytes: bytes.length })
  }
  out({ event: 'ready', stack: deps.stack, peerId: libp2p.peerId.toString(),
    addrs: libp2p.getMultiaddrs().map(String) })
  if (target != null) {
    const connection = await libp2p.dial(deps.multiaddr(target))
    out({ event: 'connected', peer: connection.remotePeer.toString() })
  }
  if (catCid != null) {
    const started = Date.now()
    const parts = []
    let total = 0
    for await (const part of fs.cat(deps.CID.parse(catCid))) {
      parts.push(part)
      total += part.length
    }
    await writeFile(outFile, Buffer.concat(parts.map((p) => Buffer.from(p)), total))
    out({ event: 'cat', cid: catCid, bytes: total, ms: Date.now() - started })
  }
} catch (err) {
  console.error(err)
  out({ event: 'error', message: String(err && err.message ? err.message : err) })
}
