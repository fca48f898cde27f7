// Verifies a Chamber webhook delivery with a Standard Webhooks library (npm install standardwebhooks).
// Usage: node verify-library.mjs SECRET HEADERS_JSON < raw-body   (prints "verified", or the reason and exits 1)
import { Webhook } from "standardwebhooks"

const [secret, headersJson] = process.argv.slice(2)
const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const body = Buffer.concat(chunks).toString("utf8")

try {
  // Checks webhook-id, webhook-timestamp (5 minutes either way) and webhook-signature; returns the parsed body.
  const delivery = new Webhook(secret).verify(body, JSON.parse(headersJson))
  console.log("verified", delivery.id, delivery.type)
} catch (error) {
  console.log(error.message)
  process.exit(1)
}
