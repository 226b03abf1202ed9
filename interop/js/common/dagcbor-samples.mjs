// DAG-CBOR samples encoded by @ipld/dag-cbor (the codec OrbitDB uses for entries, manifests,
// identities and access controllers), for the Java codec's interop test. Run it with a stack's
// folder as the working directory (`cd interop/js/stack-b && node ../common/dagcbor-samples.mjs`),
// so the packages come from that stack's node_modules.
//
//   dagcbor-samples.mjs samples        one JSON line per sample: {"name", "hex", "cid"}
//   dagcbor-samples.mjs roundtrip <hex>...
//                                      decode each block and encode it again; one JSON line each:
//                                      {"hex": <re-encoded>, "cid"} or {"error": <message>}
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { createHash } from 'node:crypto'

const load = (path) => import(pathToFileURL(join(process.cwd(), 'node_modules', path)).href)
const dagCbor = await load('@ipld/dag-cbor/src/index.js')
const { CID } = await load('multiformats/dist/src/index.js')
const { sha256 } = await load('multiformats/dist/src/hashes/sha2.js')
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
const hex = (bytes) => Buffer.from(bytes).toString('hex')

async function cidOf (bytes) {
  return CID.createV1(dagCbor.code, await sha256.digest(bytes)).toString()
}

const linkA = CID.parse('bafyreidykglsfhoixmivffc5uwhcgshx4j465xwqntbmu43nb2dzqwfvae')
const linkV0 = CID.parse('QmXg9Pp2ytZ14xgmQjYEiHjVjMFXzCVVEcRTWJBmLgR39V')
const digest = createHash('sha256').update('relay-pinner').digest()

// Keys in insertion (non-canonical) order on purpose: the encoder must sort them.
const samples = {
  'orbitdb-entry': {
    id: '/orbitdb/zdpuAwZ8sTKzTWPVJ7gmhn3hjvPTczCtyoBtpW8Q6e5sWYBf3',
    payload: { op: 'PUT', key: 'doc-1', value: { title: 'Hello', n: 42, ratio: 0.5 } },
    next: ['zdpuAmWbXn5ZXF4V4ug1WsQDZiKb5bGZHLTX8HdMXBDPx2h4s'],
    refs: [],
    clock: { id: '02' + 'ab'.repeat(32), time: 17 },
    v: 2,
    key: '02' + 'ab'.repeat(32),
    identity: 'zdpuAqkDLBNdP5aGHo7ZLfWNtKvavsxnV2tmmzAq1r1ZSkWrB',
    sig: '3045022100' + 'cd'.repeat(32) + '0220' + 'ef'.repeat(32)
  },
  'orbitdb-manifest': {
    name: 'events-db',
    type: 'events',
    accessController: '/ipfs/zdpuAsAz1bpT9vgMVyEzDDqgo2BkwVKsJ9kGKeZyXW4uTcZBk'
  },
  'links-and-bytes': {
    link: linkA,
    v0: linkV0,
    links: [linkA, linkV0, linkA],
    bytes: new Uint8Array(digest),
    empty: new Uint8Array(0)
  },
  'integers': [0, 1, 23, 24, 255, 256, 65535, 65536, 4294967295, 4294967296,
    Number.MAX_SAFE_INTEGER, -1, -24, -25, -256, -257, -65536, -65537, -4294967296,
    Number.MIN_SAFE_INTEGER, 18446744073709551615n, -18446744073709551616n,
    9223372036854775807n, -9223372036854775808n],
  'floats': [0.5, -0.5, 1.1, 0.1, 1e300, -1e-300, 5e-324, 82497.63712086187, -0.0],
  'strings-and-keys': {
    b: 'b', a: 'a', bb: 'bb', 'é': 'é', ccc: 'ccc', '水': '水', '𐅑': '𐅑',
    '': 'empty key', long: 'x'.repeat(70000)
  },
  'specials': [null, true, false, [], {}, [[[]]], { a: { b: { c: [null] } } }]
}

const mode = process.argv[2]
if (mode === 'samples') {
  for (const [name, value] of Object.entries(samples)) {
    const bytes = dagCbor.encode(value)
    out({ name, hex: hex(bytes), cid: await cidOf(bytes) })
  }
} else if (mode === 'roundtrip') {
  for (const input of process.argv.slice(3)) {
    try {
      const bytes = dagCbor.encode(dagCbor.decode(Buffer.from(input, 'hex')))
      out({ hex: hex(bytes), cid: await cidOf(bytes) })
    } catch (err) {
      out({ error: String(err.message) })
    }
  }
} else {
  console.error('usage: dagcbor-samples.mjs samples | roundtrip <hex>...')
  process.exit(2)
}
