/**
 * docs/api.md "Request ids and logs": every line logged while serving a request carries its id
 * as `request_id`, errors included; the access line is its last. No endpoint of the API fails
 * on purpose, so a probe API behind the same wrapper around every request (`serveApi`) logs a warning and then
 * fails with a defect, over a socket.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { Authentication, operation } from "../src/index.ts"
import { ValidationErrors } from "../src/shared/ValidationErrors.ts"
import { ValidationErrorsLive } from "../src/server/ValidationErrorsLive.ts"
import { probeKeyLive, serveProbe } from "./probe.ts"

const lines: Array<{ message: unknown; level: string; annotations: Record<string, unknown> }> = []
const CaptureLogs = Logger.layer([Logger.map(Logger.formatStructured, (line) => void lines.push(JSON.parse(JSON.stringify(line))))])

const crash = HttpApiEndpoint.get("crash", "/probe/crash", { success: Schema.Struct({ ok: Schema.Boolean }) })
  .pipe(operation({ access: "invoices:read", summary: "Probe", description: "Logs a warning, then fails." }))
class CrashGroup extends HttpApiGroup.make("probe").add(crash).middleware(Authentication) {}
class CrashApi extends HttpApi.make("probe").add(CrashGroup).middleware(ValidationErrors) {}

const CrashHandlers = HttpApiBuilder.group(CrashApi, "probe", (handlers) =>
  handlers.handle("crash", () => Effect.logWarning("about to fail").pipe(Effect.andThen(Effect.die(new Error("boom"))))))
  .pipe(Layer.provide([probeKeyLive("invoices:read"), ValidationErrorsLive]))

const Server = serveProbe(CrashApi, CrashHandlers).pipe(
  Layer.provide([CaptureLogs, Layer.succeed(References.MinimumLogLevel)("Info")])
)

describe("request ids on log lines", () => {
  layer(Server)((it) => {
    it.effect("a failing request's warning, its error and its access line all carry its request id; it answers 500 with the id", () =>
      Effect.gen(function*() {
        const response = yield* HttpClient.execute(HttpClientRequest.get("/probe/crash").pipe(HttpClientRequest.setHeader("x-request-id", "crash-1")))
        assert.strictEqual(response.status, 500)
        assert.deepStrictEqual(yield* response.json, { message: "Server error." })
        assert.strictEqual(response.headers["x-request-id"], "crash-1")
        const mine = lines.filter((l) => l.annotations.request_id === "crash-1")
        assert.deepStrictEqual(mine.map((l) => [l.level, l.message]), [
          ["WARN", "about to fail"],
          ["ERROR", "unhandled request failure"],
          ["INFO", "request"]
        ])
        assert.deepInclude(mine[2]!.annotations, { method: "GET", path: "/probe/crash", status: 500 })
        // No line of the request goes without its id.
        assert.deepStrictEqual(lines.filter((l) => l.annotations.request_id === undefined).map((l) => l.message), [])
      }))

    it.effect("a key or a webhook secret anywhere in the path or query is not logged, whatever the parameter's name", () =>
      Effect.gen(function*() {
        const key = `cck_${"A1b2C3d4E5".repeat(4)}`
        const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw5dL4Y6sZtQ0="
        const sent: ReadonlyArray<readonly [string, string]> = [
          [`/api/v1/members?bearer=${key}`, "/api/v1/members?bearer=[redacted]"],
          [`/api/v1/members/search?name=${key}&page=2`, "/api/v1/members/search?name=[redacted]&page=2"],
          [`/api/v1/members/${key}`, "/api/v1/members/[redacted]"],
          [`/api/v1/${key}/members?page=1`, "/api/v1/[redacted]/members?page=1"],
          [`/api/v1/hooks?url=https://h.example/?s=${secret}`, "/api/v1/hooks?url=https://h.example/?s=[redacted]"],
          [`/api/v1/hooks?s=${encodeURIComponent(secret)}&x=1`, "/api/v1/hooks?s=[redacted]&x=1"]
        ]
        for (const [i, [path, logged]] of sent.entries()) {
          const response = yield* HttpClient.execute(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeader("x-request-id", `misplaced-${i}`)))
          assert.strictEqual(response.status, 404, path)
          const line = lines.find((l) => l.annotations.request_id === `misplaced-${i}` && l.message === "request")
          assert.strictEqual(line?.annotations.path, logged, path)
        }
        // A request id shaped like a key is not kept: another is made.
        const response = yield* HttpClient.execute(HttpClientRequest.get("/api/v1/members").pipe(HttpClientRequest.setHeader("x-request-id", key)))
        assert.notStrictEqual(response.headers["x-request-id"], key)
        const written = JSON.stringify(lines)
        assert.notInclude(written, key.slice(12))
        assert.notInclude(written, secret.slice(12, 30))
      }))
  })
})
