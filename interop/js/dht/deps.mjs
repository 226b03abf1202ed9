// The DHT test peers' packages (../common/kad-peer.mjs), the same versions as stack C.
export { createLibp2p } from 'libp2p'
export { tcp } from '@libp2p/tcp'
export { noise } from '@libp2p/noise'
export { yamux } from '@libp2p/yamux'
export { identify, identifyPush } from '@libp2p/identify'
export { ping } from '@libp2p/ping'
export { multiaddr } from '@multiformats/multiaddr'
export { kadDHT, passthroughMapper } from '@libp2p/kad-dht'
export { CID } from 'multiformats/cid'
export { sha256 } from 'multiformats/hashes/sha2'
export const stack = 'dht'
export const libp2pVersion = 3
