// Verifies a Chamber webhook delivery with node:crypto alone.
// Usage: node verify.mjs SECRET HEADERS_JSON < raw-body   (prints "verified", or the reason and exits 1)
import { createHmac, timingSafeEqual } from "node:crypto"
import { pathToFileURL } from "node:url"

const same = (a, b) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Throws unless both signatures match `body`, the raw request body (a Buffer, exactly as received). */
export function verifyDelivery(secret, headers, body, toleranceSeconds = 300) {
  const h = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), String(value)]))

  // 1. X-CC-Signature: hex HMAC-SHA256 of the raw body, keyed with the whole secret string.
  const hex = createHmac("sha256", secret).update(body).digest("hex")
  if (!same(hex, h["x-cc-signature"] ?? "")) throw new Error("X-CC-Signature does not match")

  // 2. webhook-signature (Standard Webhooks): base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}",
  //    keyed with the base64-decoded secret after "whsec_". Refuse old or future timestamps (replays).
  const id = h["webhook-id"] ?? ""
  const timestamp = h["webhook-timestamp"] ?? ""
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) {
    throw new Error("webhook-timestamp is missing or too far from now")
  }
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64")
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest("base64")
  const signatures = (h["webhook-signature"] ?? "").split(" ")
  if (!signatures.some((s) => s.startsWith("v1,") && same(s.slice(3), expected))) {
    throw new Error("webhook-signature does not match")
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [secret, headersJson] = process.argv.slice(2)
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  try {
    verifyDelivery(secret, JSON.parse(headersJson), Buffer.concat(chunks))
    console.log("verified")
  } catch (error) {
    console.log(error.message)
    process.exit(1)
  }
}
