// Browser E2E 1 (relay/.../BrowserOrbitDbE2eIT): OrbitDB 4 in a page, through the relay only.
//
//   orbitdb.html?role=writer&relay=<multiaddr>&entries=50&images=5&imageBytes=1048576
//     Dials the relay, makes `images` PNG images of at least `imageBytes` bytes (random pixels on
//     a canvas), adds them with @helia/unixfs (256 KiB chunks, raw leaves, CIDv1), opens a new
//     `events` database and writes `entries` entries `{ text, imageCid }` naming image i % images.
//     Reports {event: 'written', peerId, address, entries, images: [{cid, sha256, bytes}]} and
//     stays open (serving its blocks) until the test closes it.
//   orbitdb.html?role=reader&relay=<multiaddr>&address=<orbitdb address>&entries=50&images=<cid,...>
//     Fresh stores; opens the database by address through the relay, waits for `entries`
//     entries, fetches each image over bitswap, shows entries and images, and reports
//     {event: 'read', peerId, entries: [text...], images: [{cid, sha256, bytes}], ms}.
//   orbitdb.html?role=live-reader&relay=<multiaddr>&address=<orbitdb address>
//     The live reader of RelayOnlyReadersJsInteropIT (orbitdb#1255): fresh stores; opens the
//     database by address through the relay (before its first entry is written), reports
//     {event: 'opened', peerId}, then {event: 'update', hash, text} for each OrbitDB `update`
//     event, with no sync call, reconnect or re-open. `peers()` (through eval) lists the peers of
//     its open connections.
import { createOrbitDB } from '@orbitdb/core'
import { unixfs } from '@helia/unixfs'
import { fixedSize } from 'ipfs-unixfs-importer/chunker'
import { CID } from 'multiformats/cid'
import { fail, log, multiaddr, params, report, sha256Hex, startPeer, status } from './lib/peer.js'

const role = params.get('role')
const relay = params.get('relay')
document.getElementById('role').textContent = role
const facts = (text) => { document.getElementById('facts').textContent += text + '\n' }

async function makeImage (index, minBytes) {
  // Mostly random pixels: the PNG compresses little, then is padded to exactly minBytes.
  const side = Math.ceil(Math.sqrt(minBytes / 3)) + 8
  const canvas = new OffscreenCanvas(side, side)
  const ctx = canvas.getContext('2d')
  const image = ctx.createImageData(side, side)
  const random = new Uint8Array(65536)
  for (let offset = 0; offset < image.data.length; offset += random.length) {
    crypto.getRandomValues(random)
    image.data.set(random.subarray(0, Math.min(random.length, image.data.length - offset)), offset)
  }
  const hue = [[255, 80, 80], [80, 200, 80], [80, 120, 255], [230, 200, 40], [200, 80, 220]][index % 5]
  for (let i = 0; i < image.data.length; i += 4) {
    image.data[i] = (image.data[i] & 0x3f) + hue[0] * 0.75
    image.data[i + 1] = (image.data[i + 1] & 0x3f) + hue[1] * 0.75
    image.data[i + 2] = (image.data[i + 2] & 0x3f) + hue[2] * 0.75
    image.data[i + 3] = 255
  }
  ctx.putImageData(image, 0, 0)
  ctx.fillStyle = 'white'
  ctx.fillRect(side / 2 - 160, side / 2 - 50, 320, 100)
  ctx.fillStyle = 'black'
  ctx.font = 'bold 64px sans-serif'
  ctx.textAlign = 'center'
  ctx.textBaseline = 'middle'
  ctx.fillText(`image ${index + 1}`, side / 2, side / 2)
  let bytes = new Uint8Array(await (await canvas.convertToBlob({ type: 'image/png' })).arrayBuffer())
  if (bytes.length < minBytes) {
    // Never smaller than asked: pad after the PNG's IEND chunk (decoders ignore trailing bytes).
    const padded = new Uint8Array(minBytes)
    padded.set(bytes)
    for (let offset = bytes.length; offset < minBytes; offset += 65536) {
      crypto.getRandomValues(padded.subarray(offset, Math.min(minBytes, offset + 65536)))
    }
    bytes = padded
  }
  return bytes
}

function showImage (bytes, cid) {
  const img = document.createElement('img')
  img.src = URL.createObjectURL(new Blob([bytes], { type: 'image/png' }))
  img.title = cid
  document.getElementById('images').append(img)
}

function showEntry (text) {
  const li = document.createElement('li')
  li.textContent = text
  document.getElementById('entries').append(li)
}

async function writer ({ libp2p, helia }) {
  const entries = Number(params.get('entries') ?? 50)
  const imageCount = Number(params.get('images') ?? 5)
  const imageBytes = Number(params.get('imageBytes') ?? 1024 * 1024)
  const fs = unixfs(helia)
  const images = []
  status(`making ${imageCount} images`)
  for (let i = 0; i < imageCount; i++) {
    const bytes = await makeImage(i, imageBytes)
    const cid = await fs.addBytes(bytes, {
      rawLeaves: true, cidVersion: 1, chunker: fixedSize({ chunkSize: 256 * 1024 })
    })
    images.push({ cid: cid.toString(), sha256: await sha256Hex(bytes), bytes: bytes.length })
    showImage(bytes, cid.toString())
    log(`image ${i + 1}: ${cid} (${bytes.length} bytes)`)
  }
  const orbitdb = await createOrbitDB({ ipfs: helia, id: 'page-writer', directory: './orbitdb-writer' })
  const name = `browser-e2e-${Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, '0')).join('')}`
  const db = await orbitdb.open(name, { type: 'events' })
  db.events.on('error', (err) => log(`db error ${err?.stack ?? err}`))
  facts(`database ${db.address}`)
  status(`writing ${entries} entries`)
  for (let i = 0; i < entries; i++) {
    const text = `browser entry ${i + 1}`
    await db.add({ text, imageCid: images[i % imageCount].cid })
    showEntry(text)
  }
  status(`wrote ${entries} entries and ${imageCount} images`, 'done')
  report({ event: 'written', peerId: libp2p.peerId.toString(), address: db.address.toString(), entries, images })
}

async function reader ({ libp2p, helia }) {
  const started = performance.now()
  const address = params.get('address')
  const entries = Number(params.get('entries') ?? 50)
  const cids = (params.get('images') ?? '').split(',').filter(Boolean)
  const orbitdb = await createOrbitDB({ ipfs: helia, id: 'page-reader', directory: './orbitdb-reader' })
  status(`opening ${address}`)
  facts(`database ${address}`)
  const db = await orbitdb.open(address)
  db.events.on('error', (err) => log(`db error ${err?.stack ?? err}`))
  let all = await db.all()
  while (all.length < entries) {
    status(`waiting: ${all.length} of ${entries} entries`)
    await new Promise((resolve) => setTimeout(resolve, 250))
    all = await db.all()
  }
  // db.all() lists the oldest first (OrbitDB 4 events).
  const texts = all.map((e) => e.value.text)
  texts.forEach(showEntry)
  log(`${texts.length} entries after ${Math.round(performance.now() - started)} ms`)
  const fs = unixfs(helia)
  const images = []
  for (const text of cids) {
    status(`fetching image ${images.length + 1} of ${cids.length}`)
    const parts = []
    let total = 0
    for await (const part of fs.cat(CID.parse(text))) {
      parts.push(part)
      total += part.length
    }
    const bytes = new Uint8Array(total)
    let offset = 0
    for (const part of parts) { bytes.set(part, offset); offset += part.length }
    images.push({ cid: text, sha256: await sha256Hex(bytes), bytes: total })
    showImage(bytes, text)
    log(`image ${text}: ${total} bytes`)
  }
  const ms = Math.round(performance.now() - started)
  status(`read ${texts.length} entries and ${images.length} images in ${ms} ms`, 'done')
  report({ event: 'read', peerId: libp2p.peerId.toString(), entries: texts, images, ms })
}

async function liveReader ({ libp2p, helia }) {
  const address = params.get('address')
  window.peers = () => [...new Set(libp2p.getConnections().map((c) => c.remotePeer.toString()))]
  const orbitdb = await createOrbitDB({ ipfs: helia, id: 'page-live-reader', directory: './orbitdb-live-reader' })
  status(`opening ${address}`)
  facts(`database ${address}`)
  const db = await orbitdb.open(address)
  db.events.on('error', (err) => log(`db error ${err?.stack ?? err}`))
  db.events.on('update', (entry) => {
    const text = entry.payload?.value?.text ?? null
    showEntry(text)
    report({ event: 'update', hash: entry.hash, text })
  })
  status('open: entries appear as they are written', 'done')
  report({ event: 'opened', peerId: libp2p.peerId.toString() })
}

try {
  const peer = await startPeer()
  status(`dialling the relay ${relay}`)
  facts(`relay ${relay}`)
  const connection = await peer.libp2p.dial(multiaddr(relay))
  log(`connected to ${connection.remoteAddr}`)
  facts(`peer ${peer.libp2p.peerId}`)
  report({ event: 'connected', peerId: peer.libp2p.peerId.toString(), relayAddr: connection.remoteAddr.toString() })
  if (role === 'writer') await writer(peer)
  else if (role === 'reader') await reader(peer)
  else if (role === 'live-reader') await liveReader(peer)
  else throw new Error(`unknown role ${role}`)
} catch (err) {
  fail(err)
}
