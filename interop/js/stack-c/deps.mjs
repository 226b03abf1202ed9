// Stack C (js-libp2p 3.3 / Helia 7 / @libp2p/gossipsub 17): the packages the shared scripts in
// ../common use, resolved from here. Helia 7 builds its own libp2p from a config when it starts
// (@helia/libp2p 2), so the scripts create a Helia node through ../common/helia-node.mjs, which
// uses createHelia below for this stack.
export { createLibp2p } from 'libp2p'
export { tcp } from '@libp2p/tcp'
export { webSockets } from '@libp2p/websockets'
export { noise } from '@libp2p/noise'
export { yamux } from '@libp2p/yamux'
export { identify, identifyPush } from '@libp2p/identify'
export { ping } from '@libp2p/ping'
export { gossipsub } from '@libp2p/gossipsub'
export { multiaddr } from '@multiformats/multiaddr'
export const stack = 'C'
export const libp2pVersion = 3
// OrbitDB and the Helia pieces its test peers use (../common/orbitdb-peer.mjs).
export {
  createOrbitDB, Entry, Identities, IPFSAccessController, OrbitDBAccessController,
  useIdentityProvider
} from '@orbitdb/core'
export { createHelia } from 'helia'
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
// Installed for later suites (DHT); no shared script uses it yet.
export { kadDHT } from '@libp2p/kad-dht'
