/**
 * An OTLP/HTTP collector for the bench: takes every export (traces, metrics) and answers 200,
 * counting what it took. The exporters of `ours-otlp` send to it as to a real collector.
 */
import { createServer } from "node:http"
import { listen } from "./shared.ts"

export const startOtlpSink = async () => {
  let [posts, bytes] = [0, 0]
  const server = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => (bytes += chunk.length))
    req.on("end", () => void (posts++, res.writeHead(200, { "content-type": "application/x-protobuf" }).end()))
  })
  const { port, close } = await listen(server)
  return { url: `http://127.0.0.1:${port}`, posts: () => posts, bytes: () => bytes, close }
}
