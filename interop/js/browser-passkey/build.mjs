// Build step of the browser passkey test (run by interop/js/install.sh after `npm ci`): bundles
// pages/*.js with esbuild into dist/ (gitignored) and copies pages/*.html and the shared
// stylesheet of interop/js/browser beside them. The pages import the libp2p/Helia peer of
// interop/js/browser (pages/lib/peer.js), so that project must be installed first; the
// relay's BrowserPasskeyE2eIT serves dist/ itself and drives Chromium through interop/js/browser.
import { build } from 'esbuild'
import { cpSync, mkdirSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const pages = join(here, 'pages')
const dist = join(here, 'dist')
mkdirSync(dist, { recursive: true })
const entries = readdirSync(pages).filter((f) => f.endsWith('.js')).map((f) => join(pages, f))
await build({
  entryPoints: entries,
  outdir: dist,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'chrome120',
  sourcemap: true,
  minify: false,
  logLevel: 'warning',
  // The provider's Node-only imports (its package.json maps `crypto` to nothing for browsers).
  define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' }
})
for (const file of readdirSync(pages).filter((f) => f.endsWith('.html'))) {
  cpSync(join(pages, file), join(dist, file))
}
cpSync(join(here, '..', 'browser', 'pages', 'page.css'), join(dist, 'page.css'))
process.stderr.write(`interop/js/browser-passkey/build.mjs: bundled ${entries.length} page(s) into dist/\n`)
