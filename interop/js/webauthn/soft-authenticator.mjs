// A software WebAuthn authenticator for Node 22: installs `window` (location of the relying party),
// `navigator.credentials.create/get` and `PublicKeyCredential` so the real passkey identity
// provider (@le-space/orbitdb-identity-provider-webauthn-did) runs outside a browser. Keys are
// WebCrypto P-256 (ES256, COSE -7) or Ed25519 (EdDSA, COSE -8); assertions are real: the
// authenticator data (SHA-256 of the rpId, flags, counter) and the client data JSON
// (`webauthn.get`, the challenge in base64url, the origin) are signed as a browser's platform
// authenticator signs them, `authenticatorData || SHA-256(clientDataJSON)`, P-256 signatures in
// DER without low-S normalisation (as authenticators emit them).
import { webcrypto } from 'node:crypto'

const subtle = webcrypto.subtle
const enc = new TextEncoder()

export const FLAG_UP = 0x01
export const FLAG_UV = 0x04
export const FLAG_AT = 0x40

export const b64url = (bytes) => Buffer.from(bytes).toString('base64url')
const bytesOf = (source) => source instanceof ArrayBuffer
  ? new Uint8Array(source)
  : new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}
const sha256 = async (bytes) => new Uint8Array(await subtle.digest('SHA-256', bytes))
const u32 = (n) => new Uint8Array([(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff])
const buffer = (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)

// Minimal CBOR for the attestation object and COSE keys (small maps, byte strings).
const cborHead = (major, n) => n < 24 ? new Uint8Array([(major << 5) | n])
  : n < 256 ? new Uint8Array([(major << 5) | 24, n])
    : new Uint8Array([(major << 5) | 25, n >> 8, n & 0xff])
const cborInt = (n) => n >= 0 ? cborHead(0, n) : cborHead(1, -1 - n)
const cborBytes = (b) => concat(cborHead(2, b.length), b)
const cborText = (s) => { const b = enc.encode(s); return concat(cborHead(3, b.length), b) }

/** r||s (64 bytes) to DER, as an authenticator returns it. */
export function rawToDer (raw) {
  const int = (b) => {
    let i = 0
    while (i < b.length - 1 && b[i] === 0) i++
    b = b.subarray(i)
    return b[0] & 0x80 ? concat(new Uint8Array([0x02, b.length + 1, 0]), b) : concat(new Uint8Array([0x02, b.length]), b)
  }
  const body = concat(int(raw.subarray(0, 32)), int(raw.subarray(32)))
  return concat(new Uint8Array([0x30, body.length]), body)
}

export class SoftAuthenticator {
  /**
   * @param {{origin: string, rpId?: string, algorithm?: 'P-256'|'Ed25519'}} options
   */
  constructor ({ origin, algorithm = 'P-256' }) {
    this.origin = origin
    this.algorithm = algorithm
    this.flags = FLAG_UP | FLAG_UV
    this.credentials = new Map()
    this.lastCredentialId = null
    this.counter = 0
  }

  install () {
    const url = new URL(this.origin)
    globalThis.window = globalThis.window || globalThis
    globalThis.window.location = { hostname: url.hostname, origin: url.origin, href: url.href }
    globalThis.PublicKeyCredential = {
      isUserVerifyingPlatformAuthenticatorAvailable: async () => true
    }
    const store = new Map()
    globalThis.localStorage = {
      getItem: (k) => (store.has(k) ? store.get(k) : null),
      setItem: (k, v) => store.set(k, String(v)),
      removeItem: (k) => store.delete(k)
    }
    Object.defineProperty(globalThis, 'navigator', {
      value: { credentials: { create: (o) => this.create(o), get: (o) => this.get(o) } },
      configurable: true,
      writable: true
    })
    return this
  }

  async create ({ publicKey: options }) {
    const algs = options.pubKeyCredParams.map((p) => p.alg)
    const cose = this.algorithm === 'Ed25519' ? (algs.includes(-8) ? -8 : -50) : -7
    if (!algs.includes(cose)) throw Object.assign(new Error('no supported algorithm'), { name: 'NotSupportedError' })
    const pair = this.algorithm === 'Ed25519'
      ? await subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])
      : await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])
    const raw = new Uint8Array(await subtle.exportKey('raw', pair.publicKey))
    const rawId = new Uint8Array(webcrypto.getRandomValues(new Uint8Array(16)))
    const rpId = options.rp.id || globalThis.window.location.hostname
    const coseKey = this.algorithm === 'Ed25519'
      ? concat(new Uint8Array([0xa4]), cborInt(1), cborInt(1), cborInt(3), cborInt(cose), cborInt(-1), cborInt(6),
        cborInt(-2), cborBytes(raw))
      : concat(new Uint8Array([0xa5]), cborInt(1), cborInt(2), cborInt(3), cborInt(-7), cborInt(-1), cborInt(1),
        cborInt(-2), cborBytes(raw.subarray(1, 33)), cborInt(-3), cborBytes(raw.subarray(33, 65)))
    const authData = concat(await sha256(enc.encode(rpId)), new Uint8Array([this.flags | FLAG_AT]), u32(this.counter),
      new Uint8Array(16), new Uint8Array([0, rawId.length]), rawId, coseKey)
    const attestationObject = concat(new Uint8Array([0xa3]), cborText('fmt'), cborText('none'), cborText('attStmt'),
      new Uint8Array([0xa0]), cborText('authData'), cborBytes(authData))
    const clientDataJSON = enc.encode(JSON.stringify({
      type: 'webauthn.create', challenge: b64url(bytesOf(options.challenge)), origin: this.origin, crossOrigin: false
    }))
    const id = b64url(rawId)
    this.credentials.set(id, { pair, raw, rpId })
    this.lastCredentialId = id
    return {
      id,
      rawId: buffer(rawId),
      type: 'public-key',
      response: {
        clientDataJSON: buffer(clientDataJSON),
        attestationObject: buffer(attestationObject),
        getPublicKey: () => null
      },
      getClientExtensionResults: () => ({})
    }
  }

  async get ({ publicKey: options }) {
    const allowed = options.allowCredentials?.[0]?.id
    const id = allowed ? b64url(bytesOf(allowed)) : this.lastCredentialId
    const credential = this.credentials.get(id)
    if (!credential) throw Object.assign(new Error('unknown credential'), { name: 'NotAllowedError' })
    const rpId = options.rpId || globalThis.window.location.hostname
    this.counter++
    const authenticatorData = concat(await sha256(enc.encode(rpId)), new Uint8Array([this.flags]), u32(this.counter))
    const clientDataJSON = enc.encode(JSON.stringify({
      type: 'webauthn.get', challenge: b64url(bytesOf(options.challenge)), origin: this.origin, crossOrigin: false
    }))
    const signed = concat(authenticatorData, await sha256(clientDataJSON))
    const signature = this.algorithm === 'Ed25519'
      ? new Uint8Array(await subtle.sign({ name: 'Ed25519' }, credential.pair.privateKey, signed))
      : rawToDer(new Uint8Array(await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, credential.pair.privateKey, signed)))
    return {
      id,
      rawId: buffer(Buffer.from(id, 'base64url')),
      type: 'public-key',
      response: {
        clientDataJSON: buffer(clientDataJSON),
        authenticatorData: buffer(authenticatorData),
        signature: buffer(signature),
        userHandle: null
      },
      getClientExtensionResults: () => ({})
    }
  }

  /** The raw public key of the credential last created (65-byte P-256 point or 32-byte Ed25519). */
  publicKey (id = this.lastCredentialId) {
    return this.credentials.get(id).raw
  }
}
