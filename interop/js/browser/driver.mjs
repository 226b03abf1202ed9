// Drives headless Chromium for the Java browser tests (io.relaypinner.testkit.browser.
// HeadlessBrowser). Serves the bundled pages (dist/) on http://127.0.0.1:<port> and, given a
// certificate, on https://127.0.0.1:<port>; opens each page in its own Chromium with a new empty
// profile; passes what pages report to the test; screenshots each page when it closes.
//
//   driver.mjs --screenshots <dir> [--cert <pem> --key <pem>] [--trust <pem>[,<pem>...]]
//
// --trust: certificates the browser accepts although no public CA issued them. Chromium gets
// --ignore-certificate-errors-spki-list with the SHA-256 of each one's public key (SPKI), so a
// chain holding one of these keys verifies (and only such a chain: every other certificate error
// still fails). The https pages' own --cert is trusted the same way.
//
// Commands, one JSON object per line on stdin:
//   {"cmd":"open","page":ID,"url":URL}         URL absolute, or a path on the http or https origin
//                                               ("scheme":"http"|"https", default http)
//   {"cmd":"eval","page":ID,"req":N,"expression":JS}   awaits the expression in the page
//   {"cmd":"webauthn","page":ID,"req":N,"options":{...}}  adds a CDP virtual authenticator
//   {"cmd":"screenshot","page":ID,"path":FILE}
//   {"cmd":"close","page":ID}                  screenshot to <screenshots>/<ID>.png, then close
// Closing stdin closes every page the same way and exits.
//
// Events, one JSON object per line on stdout:
//   {"event":"ready",http,https,browser:{executable,source,version},spki:[...]}
//   {"event":"opened",page,url}  {"event":"report",page,data}  {"event":"console",page,type,text}
//   {"event":"pageerror",page,message}  {"event":"eval",page,req,value|error}
//   {"event":"closed",page,screenshot}  {"event":"error",message[,page,req]}
// Pages report with `relayTestReport(obj)` (a binding the driver adds to every page).
import { chromium } from 'playwright-core'
import { createHash, X509Certificate } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import { tmpdir } from 'node:os'
import { dirname, extname, join, normalize, resolve, sep } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { baseFlags } from './flags.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
const args = process.argv.slice(2)
const option = (name) => {
  const i = args.indexOf(name)
  return i < 0 ? undefined : args[i + 1]
}

const record = join(here, 'node_modules', '.browser.json')
const browserInfo = existsSync(record)
  ? JSON.parse(readFileSync(record, 'utf8'))
  : { error: 'interop/js/browser was not built: run interop/js/install.sh browser' }
if (browserInfo.error) {
  out({ event: 'error', fatal: true, message: browserInfo.error })
  process.exit(2)
}

const screenshots = resolve(option('--screenshots') ?? join(here, 'screenshots'))
mkdirSync(screenshots, { recursive: true })
const certFile = option('--cert')
const keyFile = option('--key')
const trusted = (option('--trust') ?? '').split(',').filter(Boolean)
if (certFile) trusted.push(certFile)
const spki = [...new Set(trusted.map((file) => {
  const der = new X509Certificate(readFileSync(file)).publicKey.export({ type: 'spki', format: 'der' })
  return createHash('sha256').update(der).digest('base64')
}))]

const flags = [...baseFlags,
  // WebRTC between two pages on one machine: host candidates with real addresses, not mDNS
  // names (which nothing here resolves); see pages/lib/rtc-capture.js.
  '--disable-features=WebRtcHideLocalIpsWithMdns']
if (spki.length > 0) flags.push(`--ignore-certificate-errors-spki-list=${spki.join(',')}`)

// Static pages from dist/.
const dist = join(here, 'dist')
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.map': 'application/json', '.png': 'image/png'
}
function serve (request, response) {
  const path = normalize(decodeURIComponent(new URL(request.url, 'http://x').pathname))
  const file = join(dist, path === sep ? 'index.html' : path)
  if (!file.startsWith(dist + sep) || !existsSync(file)) {
    response.writeHead(404).end('not found')
    return
  }
  response.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' })
  response.end(readFileSync(file))
}
const listen = (server) => new Promise((resolve, reject) => {
  server.once('error', reject)
  server.listen(0, '127.0.0.1', () => resolve(server.address().port))
})
const httpServer = http.createServer(serve)
const httpOrigin = `http://127.0.0.1:${await listen(httpServer)}`
let httpsServer = null
let httpsOrigin = null
if (certFile && keyFile) {
  httpsServer = https.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, serve)
  httpsOrigin = `https://127.0.0.1:${await listen(httpsServer)}`
}

const pages = new Map() // id -> { context, page, profile }

async function open ({ page: id, url, scheme }) {
  if (pages.has(id)) throw new Error(`page ${id} is already open`)
  const origin = scheme === 'https' ? httpsOrigin : httpOrigin
  if (origin == null) throw new Error('no https origin: the driver was started without --cert/--key')
  const target = /^[a-z]+:/.test(url) ? url : origin + (url.startsWith('/') ? '' : '/') + url
  const profile = mkdtempSync(join(tmpdir(), `relay-pinner-browser-${id}-`))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: browserInfo.executable, headless: true, args: flags, timeout: 60_000,
    viewport: { width: 1280, height: 900 }
  })
  const entry = { context, page: null, profile }
  pages.set(id, entry)
  await context.exposeBinding('relayTestReport', (_source, data) => out({ event: 'report', page: id, data }))
  const page = context.pages()[0] ?? await context.newPage()
  entry.page = page
  page.on('console', (message) => out({ event: 'console', page: id, type: message.type(), text: message.text() }))
  page.on('pageerror', (error) => out({ event: 'pageerror', page: id, message: String(error?.stack ?? error) }))
  page.on('crash', () => out({ event: 'pageerror', page: id, message: 'the page crashed' }))
  await page.goto(target, { waitUntil: 'load', timeout: 60_000 })
  out({ event: 'opened', page: id, url: target })
}

function opened (id) {
  const entry = pages.get(id)
  if (entry?.page == null) throw new Error(`no open page ${id}`)
  return entry
}

async function close (id) {
  const entry = pages.get(id)
  if (entry == null) return
  pages.delete(id)
  const file = join(screenshots, `${id}.png`)
  let shot = null
  try {
    if (entry.page) {
      await entry.page.screenshot({ path: file, fullPage: true, timeout: 30_000 })
      shot = file
    }
  } catch (err) {
    out({ event: 'error', page: id, message: `screenshot failed: ${err?.message ?? err}` })
  }
  try { await entry.context.close() } catch (err) { console.error(err) }
  rmSync(entry.profile, { recursive: true, force: true })
  out({ event: 'closed', page: id, screenshot: shot })
}

const handlers = {
  open,
  close: ({ page }) => close(page),
  screenshot: async ({ page, path }) => {
    await opened(page).page.screenshot({ path, fullPage: true })
  },
  eval: async ({ page, req, expression }) => {
    const value = await opened(page).page.evaluate(expression)
    out({ event: 'eval', page, req, value: value === undefined ? null : value })
  },
  webauthn: async ({ page, req, options }) => {
    const session = await opened(page).context.newCDPSession(opened(page).page)
    await session.send('WebAuthn.enable')
    const { authenticatorId } = await session.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, ...options }
    })
    out({ event: 'eval', page, req, value: { authenticatorId } })
  }
}

let queue = Promise.resolve()
let closing = false
async function shutdown () {
  if (closing) return
  closing = true
  await queue.catch(() => {})
  for (const id of [...pages.keys()]) await close(id)
  httpServer.close()
  httpsServer?.close()
  process.exit(0)
}

createInterface({ input: process.stdin })
  .on('line', (line) => {
    if (!line.trim()) return
    let command
    try {
      command = JSON.parse(line)
    } catch {
      out({ event: 'error', message: `not JSON: ${line}` })
      return
    }
    const handler = handlers[command.cmd]
    if (handler == null) {
      out({ event: 'error', message: `unknown command ${command.cmd}`, req: command.req })
      return
    }
    // Opens and closes run one at a time; evals of open pages may run alongside.
    const run = () => handler(command).catch((err) => out({
      event: 'error', page: command.page, req: command.req, message: String(err?.message ?? err)
    }))
    if (command.cmd === 'eval') run()
    else queue = queue.then(run)
  })
  .on('close', shutdown)
process.on('SIGTERM', shutdown)

out({ event: 'ready', http: httpOrigin, https: httpsOrigin, browser: browserInfo, spki })
