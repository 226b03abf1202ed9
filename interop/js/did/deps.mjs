// did:key (Ed25519) identities for OrbitDB test peers: @orbitdb/identity-provider-did with the
// key-did provider and resolver. Loaded by ../common/orbitdb-peer.mjs next to either stack's
// @orbitdb/core (the provider does not import OrbitDB itself).
export { default as OrbitDBIdentityProviderDID } from '@orbitdb/identity-provider-did'
export { Ed25519Provider } from 'key-did-provider-ed25519'
export { default as KeyDidResolver } from 'key-did-resolver'
