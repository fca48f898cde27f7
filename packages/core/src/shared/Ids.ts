/** Random identifiers: base62 for API keys and tenants, base64url for secrets. */
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** `length` uniformly random base62 characters (rejection sampling, no modulo bias). */
export const randomBase62 = (length: number): string => {
  let out = ""
  const buf = new Uint8Array(length * 2)
  while (out.length < length) {
    globalThis.crypto.getRandomValues(buf)
    for (const byte of buf) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62]
    }
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
