// Stack B (js-libp2p 3): the packages the shared scripts in ../common use, resolved from here.
export { createLibp2p } from 'libp2p'
export { tcp } from '@libp2p/tcp'
export { webSockets } from '@libp2p/websockets'
export { noise } from '@chainsafe/libp2p-noise'
export { yamux } from '@chainsafe/libp2p-yamux'
export { identify, identifyPush } from '@libp2p/identify'
export { ping } from '@libp2p/ping'
export { gossipsub } from '@libp2p/gossipsub'
export { multiaddr } from '@multiformats/multiaddr'
export const stack = 'B'
export const libp2pVersion = 3
// OrbitDB and the Helia pieces its test peers use (../common/orbitdb-peer.mjs).
export {
  createOrbitDB, Entry, Identities, IPFSAccessController, OrbitDBAccessController,
  useIdentityProvider
} from '@orbitdb/core'
export { Helia } from '@helia/utils'
export { bitswap } from '@helia/block-brokers'
export { libp2pRouting } from '@helia/routers'
export { MemoryBlockstore } from 'blockstore-core'
export { MemoryDatastore } from 'datastore-core'
export { CID } from 'multiformats/cid'
export { sha256 } from 'multiformats/hashes/sha2'
export { unixfs } from '@helia/unixfs'
export { fixedSize } from 'ipfs-unixfs-importer/chunker'
// Circuit relay v2 clients, AutoNAT and pubsub peer discovery (../common/circuit-peer.mjs,
// ../common/discovery-peer.mjs).
export { circuitRelayTransport } from '@libp2p/circuit-relay-v2'
export { autoNAT } from '@libp2p/autonat'
export { pubsubPeerDiscovery } from '@libp2p/pubsub-peer-discovery'
export { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
