// The relay's HTTP interfaces through the real clients of the Helia 7 generation (stack C, pinned
// in this folder's package.json; ../http-clients/http-clients.mjs is the same for Helia 6): an HTTP-only Helia 7 node as an app
// makes one, createHeliaLight with @helia/http's withHTTP given the relay as its delegated router
// and as its recursive gateway (so the fallback router names the relay as an HTTP gateway and the
// trustless-gateway broker fetches from it), @helia/verified-fetch 8 on that node, @ipld/car on
// the relay's CAR, @helia/delegated-routing-v1-http-api-client 9 on /routing/v1 and
// @helia/remote-pinning on /pins.
//
//   http-clients.mjs --url <relay http base> [--file <cid>] [--entry <cid>] [--raw <cid>]
//       [--car <cid>] [--peer <relay peer id>] [--pin <cid> --origin <multiaddr> --token <t>]
//
// Prints one JSON line per check ({"check":...}); exits 1 with {"event":"error"} on failure.
import { createHash } from 'node:crypto'
import { createHelia, createHeliaLight } from 'helia'
import { withHTTP } from '@helia/http'
import { unixfs } from '@helia/unixfs'
import { createVerifiedFetch } from '@helia/verified-fetch'
import { CarBlockIterator } from '@ipld/car'
import * as dagCbor from '@ipld/dag-cbor'
import { delegatedRoutingV1HttpApiClient } from '@helia/delegated-routing-v1-http-api-client'
import { defaultLogger } from '@libp2p/logger'
import { createRemotePins } from '@helia/remote-pinning'
import { Configuration, RemotePinningServiceClient } from '@ipfs-shipyard/pinning-service-client'
import { MemoryBlockstore } from 'blockstore-core'
import { MemoryDatastore } from 'datastore-core'
import { multiaddr } from '@multiformats/multiaddr'
import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'
import { equals } from 'uint8arrays/equals'

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
const args = process.argv.slice(2)
const option = (name) => {
  const i = args.indexOf(name)
  return i < 0 ? undefined : args[i + 1]
}
const url = option('--url')
const hex = (bytes) => createHash('sha256').update(bytes).digest('hex')

/** A Helia node with no libp2p: routing and blocks come only from the relay over HTTP. */
async function trustlessHelia () {
  const helia = withHTTP(createHeliaLight({
    blockstore: new MemoryBlockstore(),
    datastore: new MemoryDatastore()
  }), { delegatedRouters: [url], recursiveGateways: [url], allowInsecure: true, allowLocal: true })
  await helia.start()
  return helia
}

async function concat (iterable) {
  const chunks = []
  for await (const chunk of iterable) chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** A block as the blockstore hands it out (bytes, a list, or chunks) as one Uint8Array. */
async function toBytes (value) {
  if (value instanceof Uint8Array) return value
  if (typeof value?.subarray === 'function') return value.subarray()
  if (value?.[Symbol.asyncIterator] != null || value?.[Symbol.iterator] != null) {
    return new Uint8Array(await concat(value))
  }
  throw new Error('unexpected block type ' + typeof value)
}

try {
  const file = option('--file')
  const entry = option('--entry')
  const raw = option('--raw')
  const car = option('--car')
  const peer = option('--peer')
  const pin = option('--pin')

  if (file != null || entry != null || raw != null) {
    const helia = await trustlessHelia()
    if (file != null) {
      const bytes = await concat(unixfs(helia).cat(CID.parse(file), { signal: AbortSignal.timeout(60000) }))
      out({ check: 'trustless-file', bytes: bytes.length, sha256: hex(bytes) })
    }
    if (entry != null) {
      const cid = CID.parse(entry)
      const block = await toBytes(await helia.blockstore.get(cid, { signal: AbortSignal.timeout(30000) }))
      const digest = await sha256.digest(block)
      const value = dagCbor.decode(block)
      out({ check: 'trustless-entry', bytes: block.length, verified: equals(digest.bytes, cid.multihash.bytes), v: value.v, id: value.id })
    }
    const fresh = await trustlessHelia()
    const verifiedFetch = await createVerifiedFetch(fresh)
    if (file != null) {
      const response = await verifiedFetch(`ipfs://${file}`, { signal: AbortSignal.timeout(60000) })
      const bytes = Buffer.from(await response.arrayBuffer())
      out({ check: 'verified-fetch-file', status: response.status, bytes: bytes.length, sha256: hex(bytes) })
    }
    if (raw != null) {
      const cid = CID.parse(raw)
      const response = await verifiedFetch(`ipfs://${raw}`, { headers: { accept: 'application/vnd.ipld.raw' }, signal: AbortSignal.timeout(30000) })
      const bytes = new Uint8Array(await response.arrayBuffer())
      const digest = await sha256.digest(bytes)
      out({ check: 'verified-fetch-raw', status: response.status, contentType: response.headers.get('content-type'), bytes: bytes.length, verified: equals(digest.bytes, cid.multihash.bytes) })
    }
    await verifiedFetch.stop()
    await helia.stop()
  }

  if (car != null) {
    const response = await fetch(`${url}/ipfs/${car}?format=car`, { headers: { accept: 'application/vnd.ipld.car' } })
    const iterator = await CarBlockIterator.fromIterable(response.body)
    const roots = (await iterator.getRoots()).map(String)
    let blocks = 0
    let bytes = 0
    let verified = 0
    for await (const { cid, bytes: data } of iterator) {
      blocks++
      bytes += data.length
      const digest = await sha256.digest(data)
      if (cid.multihash.code === sha256.code && equals(digest.bytes, cid.multihash.bytes)) verified++
    }
    out({ check: 'car', contentType: response.headers.get('content-type'), roots, blocks, bytes, verified })
  }

  if (peer != null && file != null) {
    const client = delegatedRoutingV1HttpApiClient({ url })({ logger: defaultLogger() })
    await client.start?.()
    // Client 9 hands out record IDs as libp2p-key CIDs: print them as PeerIds, as client 6 does.
    const { peerIdFromCID, peerIdFromString } = await import('@libp2p/peer-id')
    const peerIdOf = (id) => CID.asCID(id) != null ? peerIdFromCID(CID.asCID(id)).toString() : id.toString()
    const providers = []
    for await (const provider of client.getProviders(CID.parse(file), { signal: AbortSignal.timeout(10000) })) {
      providers.push({ id: peerIdOf(provider.ID), addrs: provider.Addrs.map(String), protocols: provider.Protocols })
    }
    const peers = []
    for await (const record of client.getPeers(peerIdFromString(peer), { signal: AbortSignal.timeout(10000) })) {
      peers.push(peerIdOf(record.ID))
    }
    await client.stop?.()
    out({ check: 'routing', providers, peers })
  }

  if (pin != null) {
    // Remote pinning names the node's own addresses as origins, so this node has a libp2p (no
    // transports, no discovery, no public routers: it only talks HTTP to the pinning service).
    const helia = createHelia({
      blockstore: new MemoryBlockstore(),
      datastore: new MemoryDatastore(),
      libp2p: { addresses: { listen: [] }, transports: [], peerDiscovery: [], services: {} },
      http: { delegatedRouters: [], recursiveGateways: [] }
    })
    await helia.start()
    const client = new RemotePinningServiceClient(new Configuration({ endpointUrl: url, accessToken: option('--token') }))
    const pins = createRemotePins(helia, { endpointUrl: url, accessToken: option('--token'), pollInterval: 200 })
    const cid = CID.parse(pin)
    for await (const added of pins.add(cid, { name: 'interop', origins: [multiaddr(option('--origin'))], signal: AbortSignal.timeout(60000) })) {
      out({ check: 'remote-pin-added', cid: added.toString() })
    }
    const status = await pins.get(cid)
    const listed = []
    for await (const p of pins.ls()) listed.push(p.cid.toString())
    for await (const removed of pins.rm(cid)) out({ check: 'remote-pin-removed', cid: removed.toString() })
    const after = await client.pinsGet({ status: ['queued', 'pinning', 'pinned', 'failed'] })
    out({ check: 'remote-pinning', status: status.status, name: status.name, listed, countAfterRemove: after.count })
    await helia.stop()
  }
  process.exit(0)
} catch (err) {
  out({ event: 'error', message: String(err?.stack ?? err) })
  console.error(err)
  process.exit(1)
}
