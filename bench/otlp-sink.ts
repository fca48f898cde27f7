/**
 * An OTLP/HTTP collector for the bench: takes every export (traces, metrics) and answers 200,
 * counting what it took. The exporters of `ours-otlp` send to it as to a real collector.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export const startOtlpSink = () =>
  new Promise<{ readonly url: string; readonly posts: () => number; readonly bytes: () => number; readonly close: () => Promise<void> }>((resolve) => {
    let posts = 0
    let bytes = 0
    const server = createServer((req, res) => {
      req.on("data", (chunk: Buffer) => (bytes += chunk.length))
      req.on("end", () => {
        posts++
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        posts: () => posts,
        bytes: () => bytes,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done())
            server.closeAllConnections()
          })
      })
    })
  })
