// One started Helia node with its libp2p, for the shared scripts of every stack.
//
// Stacks A and B (Helia 5 and 6) take a libp2p the script created: the script's config goes to
// createLibp2p, then Helia gets that libp2p with bitswap and libp2p routing (as before stack C).
// Stack C (Helia 7) builds libp2p itself when it starts (@helia/libp2p 2 takes a config, stock
// createHelia adds bitswap, the trustless-gateway broker and fallback routers): the script's
// config replaces @helia/libp2p's defaults key by key (as an app's config does), peer discovery
// is off unless the script names some (the defaults would bootstrap to public peers and use
// mDNS), and the HTTP routers and recursive gateways are empty (they would reach public hosts).
//
//   const { libp2p, helia } = await heliaNode(deps, libp2pConfig, { blockstore, datastore })
export async function heliaNode (deps, config, { blockstore, datastore }) {
  if (deps.createHelia != null) {
    const helia = deps.createHelia({
      libp2p: { peerDiscovery: [], ...config },
      blockstore,
      datastore,
      http: { delegatedRouters: [], recursiveGateways: [] }
    })
    await helia.start()
    return { libp2p: helia.libp2p, helia }
  }
  const libp2p = await deps.createLibp2p(config)
  const helia = new deps.Helia({
    libp2p,
    blockstore,
    datastore,
    blockBrokers: [deps.bitswap()],
    routers: [deps.libp2pRouting(libp2p)]
  })
  await helia.start()
  return { libp2p, helia }
}
