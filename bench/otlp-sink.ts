/**
 * An OTLP/HTTP collector for the bench: takes every export (traces, metrics), discards it and
 * answers 200 with an empty export response in the request's encoding (protobuf or JSON),
 * counting what it took. The exporters of `ours-otlp` send to it as to a real collector.
 */
import { createServer } from "node:http"
import { listen } from "./shared.ts"

export const startOtlpSink = async () => {
  let [posts, bytes] = [0, 0]
  const server = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => (bytes += chunk.length))
    const json = req.headers["content-type"] === "application/json"
    req.on("end", () => void (posts++, res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" }).end(json ? "{}" : "")))
  })
  const { port, close } = await listen(server)
  return { url: `http://127.0.0.1:${port}`, posts: () => posts, bytes: () => bytes, close }
}
