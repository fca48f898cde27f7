/** Random identifiers: base62 for API keys and tenants, base64url for secrets. */
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** `length` uniformly random base62 characters (rejection sampling, no modulo bias). */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    // A byte is kept with probability 248/256: a few spare bytes make one draw enough nearly always.
    const bytes = globalThis.crypto.getRandomValues(new Uint8Array(length - out.length + 8))
    for (const byte of bytes) {
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
