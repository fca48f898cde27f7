/** Random identifiers: base62 for API keys and tenants, base64url for secrets. */
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/**
 * Random bytes drawn from the platform's CSPRNG a pool at a time: one `getRandomValues` call
 * per 4 KiB instead of one per identifier, which cost an event id some 20 µs in a busy server
 * (bench/README.md "The statements of a transaction"). Each byte is handed out once.
 */
const pool = new Uint8Array(4096)
let taken = pool.length
const randomByte = (): number => {
  if (taken === pool.length) {
    globalThis.crypto.getRandomValues(pool)
    taken = 0
  }
  return pool[taken++]!
}

/** `length` uniformly random base62 characters (rejection sampling, no modulo bias). */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    const byte = randomByte()
    if (byte < 248) out += BASE62[byte % 62]
  }
  return out
}

export const randomBase64Url = (bytes: number): string => {
  const buf = new Uint8Array(bytes)
  globalThis.crypto.getRandomValues(buf)
  let bin = ""
  for (const b of buf) bin += String.fromCharCode(b)
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

export const newEventId = (): string => `evt_${randomBase62(24)}`
