/**
 * The bytes of a large answer (a page, the change feed), written into a buffer that is used again
 * once Node has written the answer out (the response's `finish`). The server keeps each request's
 * answer reachable until V8's next full collection; with bytes of its own, every answer added its
 * size to V8's external memory, whose growth started a full collection about twice a second under
 * load (bench/README.md "Where the members page's time goes"). Buffers come in power-of-two sizes
 * from 32 KiB to 1 MiB, and a few of each size are kept between requests. A larger answer, or one
 * not written by Node's server, gets bytes of its own.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"

const SMALLEST = 32 * 1024
const LARGEST = 1024 * 1024
/** Buffers kept of each size between requests: as many as the connections a server answers at once. */
const KEPT = 32

const idle = new Map<number, Array<Buffer>>()

/** The size of buffer that holds `bytes`: a power of two from SMALLEST. */
const sizeFor = (bytes: number) => Math.max(SMALLEST, 2 ** Math.ceil(Math.log2(bytes)))

const release = (buffer: Buffer) => {
  const kept = idle.get(buffer.length)
  if (kept === undefined) idle.set(buffer.length, [buffer])
  else if (kept.length < KEPT) kept.push(buffer)
}

/** What an answer is written to: Node's response, which emits `finish` once every byte is out. */
export interface Finishing {
  readonly once: (event: "finish", listener: () => void) => unknown
}

/** Node's response to the request this fiber answers, when Node's server answers it. */
const nodeResponse = (context: Context.Context<never>): Finishing | undefined => {
  const request = Context.getOrUndefined(context, HttpServerRequest.HttpServerRequest)
  const response = request === undefined ? undefined : NodeHttpServerRequest.toServerResponse(request)
  return typeof response?.once === "function" ? response : undefined
}

/**
 * `text` as UTF-8 bytes to be written to `response`: in a kept buffer, back among the kept once
 * `response` has finished; bytes of their own without a response or past LARGEST.
 */
export const bytesFor = (text: string, response: Finishing | undefined): Uint8Array => {
  const length = Buffer.byteLength(text, "utf8")
  if (response === undefined || length > LARGEST) return Buffer.from(text, "utf8")
  const buffer = idle.get(sizeFor(length))?.pop() ?? Buffer.allocUnsafeSlow(sizeFor(length))
  buffer.write(text, 0, length, "utf8")
  // An answer never finished (the client went away) leaves its buffer to the collector.
  response.once("finish", () => release(buffer))
  return buffer.subarray(0, length)
}

/** `text` as UTF-8 bytes for the answer to the current request. */
export const answerBytes = (text: string): Effect.Effect<Uint8Array> =>
  Effect.withFiber((fiber) => Effect.succeed(bytesFor(text, nodeResponse(fiber.context))))
