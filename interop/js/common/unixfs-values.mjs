// UnixFS values for the Java relay's interop tests, shared by stack A and stack B: run it with the
// stack's folder as the working directory (`cd interop/js/stack-b && node ../common/unixfs-values.mjs`)
// so the packages come from that stack's node_modules.
//
//   unixfs-values.mjs     print one JSON object:
//     files: [{ name, seed, size, options, cid }]   files imported with @helia/unixfs addBytes
//                                                   (options: 'helia' defaults, 'helia-1k' = 1 KiB
//                                                   chunks, 'importer-1k' = bare ipfs-unixfs-importer
//                                                   defaults but 1 KiB chunks)
//     dags: [{ name, root, seed, size, blocks: { <cid>: <hex> } }]
//                                                   files in other layouts, read back by Java:
//                                                   'trickle-v0' (trickle, dag-pb File leaves,
//                                                   CIDv0), 'balanced-raw-type' (dag-pb leaves of
//                                                   UnixFS type Raw, 3 links per node)
//     dirs: [{ name, root, files: [{ path, seed, size }], blocks: { <cid>: <hex> } }]
//                                                   directories imported with @helia/unixfs addAll
//                                                   (wrapWithDirectory); 'hamt' uses
//                                                   shardSplitThresholdBytes: 1
// Content bytes come from xorshift32(seed), the same generator as the Java test's.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { readFileSync } from 'node:fs'

// Bare specifiers in this shared folder would resolve next to this file, so resolve them in the
// stack's node_modules through each package's "exports" map.
async function load (name, sub = '.') {
  const dir = join(process.cwd(), 'node_modules', name)
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  let entry = pkg.exports?.[sub]
  if (entry != null && typeof entry === 'object') entry = entry.import ?? entry.default
  if (entry == null) throw new Error(`no export ${sub} in ${name}`)
  return import(pathToFileURL(join(dir, entry)).href)
}

const { unixfs } = await load('@helia/unixfs')
const { importBytes } = await load('ipfs-unixfs-importer')
const { fixedSize } = await load('ipfs-unixfs-importer', './chunker')
const { trickle, balanced } = await load('ipfs-unixfs-importer', './layout')
const { MemoryBlockstore } = await load('blockstore-core', './memory')

// xorshift32 (13, 17, 5); each 32-bit state is written little-endian.
export function bytes (seed, size) {
  const out = new Uint8Array(size)
  let x = seed >>> 0
  for (let i = 0; i < size; i += 4) {
    x ^= x << 13; x >>>= 0
    x ^= x >>> 17
    x ^= x << 5; x >>>= 0
    for (let j = 0; j < 4 && i + j < size; j++) out[i + j] = (x >>> (8 * j)) & 0xff
  }
  return out
}

const MIB = 1024 * 1024
const files = []
const fs = unixfs({ blockstore: new MemoryBlockstore() })
for (const [name, seed, size] of [['zero', 1, 0], ['one', 2, 1], ['one-mib', 3, MIB],
  ['one-mib-plus-one', 4, MIB + 1], ['five-mib', 5, 5 * MIB]]) {
  const cid = await fs.addBytes(bytes(seed, size))
  files.push({ name, seed, size, options: 'helia', cid: cid.toString() })
}
{
  // 1100 leaves: more than the 1024 children @helia/unixfs puts under one node.
  const seed = 6; const size = 1100 * 1024 + 7
  const cid = await fs.addBytes(bytes(seed, size), { chunker: fixedSize({ chunkSize: 1024 }) })
  files.push({ name: 'helia-1k-chunks', seed, size, options: 'helia-1k', cid: cid.toString() })
}
{
  // 200 leaves: more than the importer's own default of 174 children per node.
  const seed = 7; const size = 200 * 1024 + 3
  const result = await importBytes(bytes(seed, size), new MemoryBlockstore(),
    { chunker: fixedSize({ chunkSize: 1024 }) })
  files.push({ name: 'importer-1k-chunks', seed, size, options: 'importer-1k', cid: result.cid.toString() })
}

async function collect (value) {
  if (value instanceof Uint8Array) return value
  const chunks = []
  for await (const chunk of value) chunks.push(chunk instanceof Uint8Array ? chunk : chunk.subarray())
  return Buffer.concat(chunks)
}

async function directory (name, entries, options) {
  const blockstore = new MemoryBlockstore()
  const dirFs = unixfs({ blockstore })
  let root
  for await (const entry of dirFs.addAll(entries.map(e => ({ path: e.path, content: bytes(e.seed, e.size) })),
    { wrapWithDirectory: true, ...options })) {
    root = entry.cid
  }
  return { name, root: root.toString(), files: entries, blocks: await dump(blockstore) }
}

async function dump (blockstore) {
  const blocks = {}
  for await (const pair of blockstore.getAll()) {
    // blockstore-core 5 yields { cid, block }, 6 yields { cid, bytes } with bytes an async
    // iterable of chunks. Keys are CIDv1 raw (the store keeps multihashes only).
    blocks[pair.cid.toString()] = Buffer.from(await collect(pair.bytes ?? pair.block)).toString('hex')
  }
  return blocks
}

async function dag (name, seed, size, options) {
  const blockstore = new MemoryBlockstore()
  const { cid } = await importBytes(bytes(seed, size), blockstore, options)
  return { name, root: cid.toString(), seed, size, blocks: await dump(blockstore) }
}

const dags = [
  await dag('trickle-v0', 21, 300 * 1024 + 11, {
    chunker: fixedSize({ chunkSize: 1024 }), layout: trickle(), rawLeaves: false, cidVersion: 0
  }),
  await dag('balanced-raw-type', 22, 40 * 1000 + 1, {
    chunker: fixedSize({ chunkSize: 1000 }), layout: balanced({ maxChildrenPerNode: 3 }),
    rawLeaves: false, leafType: 'raw'
  })
]

const nested = [
  { path: 'a.txt', seed: 11, size: 12 },
  { path: 'sub/b.bin', seed: 12, size: MIB + MIB / 2 },
  { path: 'sub/deeper/c.jpg', seed: 13, size: 3000 },
  { path: 'sub/deeper/empty', seed: 14, size: 0 }
]
const sharded = []
for (let i = 0; i < 300; i++) sharded.push({ path: `f${i}.txt`, seed: 100 + i, size: 16 + (i % 7) })
sharded.push({ path: 'inner/x.bin', seed: 500, size: 2 * MIB + 5 })
sharded.push({ path: 'inner/y.bin', seed: 501, size: 9 })

const dirs = [
  await directory('nested', nested, {}),
  await directory('hamt', sharded, { shardSplitThresholdBytes: 1 })
]
process.stdout.write(JSON.stringify({ files, dags, dirs }) + '\n')
