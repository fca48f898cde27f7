/**
 * The relay bench's HTTPS receiver (the relay tests' certificate): each POST answered 200 once its
 * body arrived, or with `hold` only once told to (`answer()`); each request kept with the moment
 * its body ended on this process's clock, so that commit-to-receipt is on one clock.
 */
import { EventEmitter, once } from "node:events"
import type { IncomingHttpHeaders, ServerResponse } from "node:http"
import { createServer } from "node:https"
import { testCertificate } from "../packages/webhook-relay/test/receiver.ts"
import { listen } from "./shared.ts"

/** A request: its event (X-CC-Delivery), path and query (which subscription), and performance.now() when its body ended. */
export type Receipt = { readonly event: string; readonly path: string; readonly headers: IncomingHttpHeaders; readonly body: Buffer; readonly at: number }

export const startBenchReceiver = async (hold = false) => {
  const { key, cert } = await testCertificate()
  const receipts: Array<Receipt> = []
  const held: Array<ServerResponse> = []
  const ok = (res: ServerResponse) => void res.writeHead(200, { "content-type": "text/plain" }).end("ok")
  const arrivals = new EventEmitter()
  const server = createServer({ key, cert }, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      receipts.push({ event: String(req.headers["x-cc-delivery"]), path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks), at: performance.now() })
      if (hold) held.push(res)
      else ok(res)
      arrivals.emit("receipt")
    })
  })
  const { port, close } = await listen(server)
  return {
    url: `https://127.0.0.1:${port}`,
    /** The certificate (PEM), for NODE_EXTRA_CA_CERTS. */
    ca: cert,
    receipts,
    /** Resolves once `count` requests have arrived since the last clear; rejects after `timeoutMs`. */
    waitFor: async (count: number, timeoutMs: number) => {
      const signal = AbortSignal.timeout(timeoutMs)
      while (receipts.length < count) {
        await once(arrivals, "receipt", { signal }).catch(() => {
          throw new Error(`the receiver got ${receipts.length} of ${count} deliveries within ${timeoutMs / 1000} s`)
        })
      }
    },
    clear: () => void (receipts.length = 0),
    /** From now on every request is answered, the held ones at once. */
    answer: () => {
      hold = false
      for (const res of held.splice(0)) if (!res.destroyed) ok(res)
    },
    close
  }
}
