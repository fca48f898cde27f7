/**
 * `chamber serve` as an operator meets it (docs/cli.md "Serving", "Stopping", "Logs"): a second
 * start that names its chamber, clear failures at start, a graceful stop under load, the stop's
 * timeout, and JSON logs; on embedded PGlite and on PostgreSQL. Then the CLI's own introduction.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { existsSync, readFileSync } from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ALL_SCOPES, READ_SCOPES } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { chamber, Env, envLayer, freePort, get, json, serving } from "./harness.ts"
import { tempDir } from "./tempDirs.ts"

/** The demo chamber of this suite's database, seeded on first use, and a key with every scope. */
const demo = Effect.gen(function*() {
  const seeded = json(yield* chamber(["demo", "--json"]))
  const tenant: string = seeded.tenant?.id ?? json(yield* chamber(["tenant", "list", "--json"]))[0].id
  const key: string = seeded.key ?? json(yield* chamber([
    "key", "mint", "--tenant", tenant, "--as", "admin@riversidechamber.example", "--name", "test", "--scopes", "all", "--json"
  ])).key
  return { tenant, key }
})

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A request on a connection of its own (kept alive, as clients do) whose answer is read whole. */
const request = (port: number, path: string, options: {
  readonly key: string
  readonly method?: string
  readonly body?: string
  /** The response is read only once this resolves (a slow client). */
  readonly readAfter?: Promise<unknown>
}) => {
  const agent = new http.Agent({ keepAlive: true })
  let written!: () => void
  const sent = new Promise<void>((resolve) => (written = resolve))
  let connected!: (socket: net.Socket) => void
  const socket = new Promise<net.Socket>((resolve) => (connected = resolve))
  const answer = new Promise<Answer>((resolve, reject) => {
    const req = http.request({
      host: "127.0.0.1",
      port,
      path,
      agent,
      method: options.method ?? "GET",
      headers: { authorization: `Bearer ${options.key}`, "content-type": "application/json" }
    }, (res) => {
      res.pause()
      void Promise.resolve(options.readAfter).then(() => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }))
        res.on("error", reject)
        res.resume()
      })
    })
    req.on("error", reject)
    req.on("socket", connected)
    req.on("finish", () => written())
    req.end(options.body)
  })
  return { sent, answer, socket }
}

/** A whole answer: the status, a body of exactly Content-Length bytes, and JSON. */
const assertWhole = (a: Answer, status: number, what: string) => {
  assert.strictEqual(a.status, status, `${what}: ${a.body}`)
  assert.strictEqual(Buffer.byteLength(a.body), Number(a.headers["content-length"]), `${what}: body length`)
  assert.doesNotThrow(() => JSON.parse(a.body), `${what}: JSON`)
}

/** A POST whose body arrives in two parts: in flight on the server until `finish()`. */
const slowPost = (port: number, key: string) => {
  const body = JSON.stringify({ name: `Slow & Sons ${Math.random()}`, status: "active" })
  const socket = net.connect(port, "127.0.0.1")
  let received = ""
  socket.on("data", (d) => (received += d))
  const closed = new Promise<string>((resolve) => socket.on("close", () => resolve(received)))
  socket.on("error", () => {})
  socket.write(
    `POST /api/v1/members HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`
  )
  return { closed, finish: () => socket.write(body.slice(10)) }
}

const refused = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.on("connect", () => (socket.destroy(), resolve("connected")))
    socket.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
  })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A module hook that records which of PGlite's modules a process loads (CHAMBER_TEST_MODULE_LOG). */
const MODULE_LOG = fileURLToPath(new URL("./fixtures/module-log.ts", import.meta.url))

for (const rt of runtimes()) {
  describe(`chamber serve on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 180_000 })((it) => {
      it.effect("a second start names its chamber, its admin and the exact command that mints a key", () =>
        Effect.gen(function*() {
          const { tenant } = yield* demo
          const server = yield* serving(["--demo-if-empty"])
          const out = server.stdout()
          assert.notMatch(out, /Demo chamber created/)
          assert.include(out, `Chamber: Riverside Chamber of Commerce (${tenant}), admin admin@riversidechamber.example\n`)
          const mint = /\n {2}(pnpm chamber key mint [^\n]+)\n/.exec(out)?.[1]
          assert.strictEqual(
            mint,
            `pnpm chamber key mint --tenant ${tenant} --as admin@riversidechamber.example --name "My key" --scopes all`
          )
          // The printed command works as printed (here without pnpm, and with --json).
          const args = mint!.replace(/^pnpm chamber /, "").match(/"[^"]*"|\S+/g)!.map((a) => a.replace(/^"|"$/g, ""))
          const minted = json(yield* chamber([...args, "--json"]))
          assert.deepInclude(minted, { name: "My key", scopes: [...ALL_SCOPES] })
          assert.strictEqual((yield* get(server.port, "/api/v1/me", minted.key)).status, 200)
        }), 120_000)

      it.effect("SIGTERM under load: every response is whole, idle connections close at once, new ones are refused, exit 0", () =>
        Effect.gen(function*() {
          const { key } = yield* demo
          const server = yield* serving()
          const { port } = server
          let signal!: () => void
          const signalled = new Promise<void>((resolve) => (signal = resolve))
          // An idle keep-alive connection: closed at once by the stop.
          const idle = request(port, "/api/v1/me", { key })
          assertWhole(yield* Effect.promise(() => idle.answer), 200, "idle")
          const idleSocket = yield* Effect.promise(() => idle.socket)
          assert.isFalse(idleSocket.destroyed, "kept alive")
          const idleClosed = new Promise<number>((resolve) => idleSocket.once("close", () => resolve(Date.now())))
          // A request in flight when the signal comes: its body is not all there yet.
          const post = slowPost(port, key)
          // A hundred concurrent requests: large list pages read only after the signal, and searches.
          const load = Array.from({ length: 100 }, (_, i) =>
            i % 4 === 0
              ? { what: `list ${i}`, ...request(port, "/api/v1/members?page=1", { key, readAfter: signalled.then(() => sleep(1_000)) }) }
              : { what: `search ${i}`, ...request(port, `/api/v1/members/search?name=${["bak", "dental", "maple", "zz"][i % 4]}`, { key }) })
          yield* Effect.promise(() => Promise.all(load.map((l) => l.sent)))
          // Failures are asserted on below, one by one; none may go unhandled meanwhile.
          for (const l of load) l.answer.catch(() => {})

          server.child.kill("SIGTERM")
          signal()
          const stopping = yield* Effect.promise(() => server.waitFor(/Stopping[.:][^\n]*/))
          assert.match(stopping, /^Stopping: \d+ requests? in flight to finish \(at most 30s\)…$/, "the slow POST at least is in flight")
          // The listener is closed: new connections are refused while the rest finishes.
          assert.strictEqual(yield* Effect.promise(() => refused(port)), "ECONNREFUSED")
          const idleClosedAt = yield* Effect.promise(() => Promise.race([idleClosed, sleep(2_000).then(() => undefined)]))
          assert.isDefined(idleClosedAt, "the idle keep-alive connection is closed at once")
          assert.isNull(server.child.exitCode, "the server waits for the request in flight")

          post.finish()
          const raw = yield* Effect.promise(() => post.closed)
          assert.match(raw, /^HTTP\/1\.1 201 /, raw)
          assert.match(raw, /\r\nconnection: close\r\n/i, "a busy connection closes after its response")
          const [head, body] = raw.split("\r\n\r\n")
          assert.strictEqual(Buffer.byteLength(body!), Number(/content-length: (\d+)/i.exec(head!)![1]))

          for (const l of load) {
            const answer = yield* Effect.promise(() => l.answer.catch((e: NodeJS.ErrnoException) => e))
            assert.notInstanceOf(answer, Error, `${l.what}: ${answer instanceof Error ? answer.message : ""}`)
            if (answer instanceof Error) continue
            assertWhole(answer, 200, l.what)
            if (l.what.startsWith("list")) assert.strictEqual(JSON.parse(answer.body).data.length, 100, l.what)
          }
          assert.strictEqual(yield* Effect.promise(() => server.exited), 0, server.stdout() + server.stderr())
          assert.match(server.stdout(), /\nStopped\.\n$/)
          assert.strictEqual(server.stderr().replace(/Creating[^\n]*\n/, ""), "")
          assert.strictEqual(yield* Effect.promise(() => refused(port)), "ECONNREFUSED")
        }), 120_000)

      it.effect("CHAMBER_SHUTDOWN_TIMEOUT: a request that cannot finish in time is cut, and the exit code says so", () =>
        Effect.gen(function*() {
          const { key } = yield* demo
          const server = yield* serving([], { CHAMBER_SHUTDOWN_TIMEOUT: "1s" })
          const post = slowPost(server.port, key) // its body never ends
          yield* Effect.promise(() => sleep(300))
          const signalled = Date.now()
          server.child.kill("SIGTERM")
          assert.strictEqual(yield* Effect.promise(() => server.exited), 1)
          const took = Date.now() - signalled
          assert.isAtLeast(took, 900)
          assert.isBelow(took, 10_000)
          assert.strictEqual(server.stderr(), "error: CHAMBER_SHUTDOWN_TIMEOUT (1s) passed with 1 request unfinished: cut.\n")
          assert.strictEqual(yield* Effect.promise(() => post.closed), "", "no response: the connection was closed")

          const bad = yield* chamber(["serve", "--port", "0", "--json"], { CHAMBER_SHUTDOWN_TIMEOUT: "soon" })
          assert.deepStrictEqual([bad.code, JSON.parse(bad.stderr)], [1, {
            error: `CHAMBER_SHUTDOWN_TIMEOUT must be a duration such as 30s, 500ms or 2m, not "soon".`
          }])
        }), 120_000)

      it.effect("CHAMBER_REQUEST_TIMEOUT: a request still arriving when it passes is a 408 JSON; a value that is no duration above zero is refused", () =>
        Effect.gen(function*() {
          const { key } = yield* demo
          const server = yield* serving([], { CHAMBER_REQUEST_TIMEOUT: "1s" })
          const started = Date.now()
          const raw = yield* Effect.promise(() => slowPost(server.port, key).closed) // its body never ends
          assert.isBelow(Date.now() - started, 10_000)
          assert.match(raw, /^HTTP\/1\.1 408 /, raw)
          assert.deepStrictEqual(JSON.parse(raw.split("\r\n\r\n")[1]!), { message: "The request took too long to arrive." })

          for (const value of ["soon", "0s"]) {
            const bad = yield* chamber(["serve", "--port", "0", "--json"], { CHAMBER_REQUEST_TIMEOUT: value })
            assert.deepStrictEqual([bad.code, JSON.parse(bad.stderr)], [1, {
              error: `CHAMBER_REQUEST_TIMEOUT must be a duration above zero, such as 30s, 500ms or 2m, not "${value}".`
            }])
          }
        }), 120_000)

      it.effect("keep-alive: a connection idle past Node's 5 s is still served, as a load balancer reuses it; CHAMBER_KEEP_ALIVE_TIMEOUT is announced and kept; under a second is refused", () =>
        Effect.gen(function*() {
          // A pool that reuses its connections however long they sat idle (Node's default agent,
          // and a load balancer whose idle timeout is longer than the server's).
          const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
          const healthz = (port: number) =>
            Effect.promise(() =>
              new Promise<{ status: number; keepAlive: string; reused: boolean; socket: net.Socket }>((resolve, reject) => {
                const req = http.get({ host: "127.0.0.1", port, path: "/healthz", agent }, (res) => {
                  res.resume()
                  res.on("end", () => resolve({ status: res.statusCode!, keepAlive: String(res.headers["keep-alive"]), reused: req.reusedSocket, socket: req.socket! }))
                })
                req.on("error", reject)
              })
            )
          // One server after the other: an embedded database serves one process.
          yield* Effect.scoped(Effect.gen(function*() {
            const server = yield* serving()
            const first = yield* healthz(server.port)
            assert.deepStrictEqual([first.status, first.keepAlive], [200, "timeout=65"])
            yield* Effect.promise(() => sleep(6_500))
            const again = yield* healthz(server.port)
            assert.deepStrictEqual([again.status, again.reused], [200, true], "the connection idle for 6.5 s answered")
          }))
          yield* Effect.scoped(Effect.gen(function*() {
            const short = yield* serving([], { CHAMBER_KEEP_ALIVE_TIMEOUT: "1s" })
            const answered = yield* healthz(short.port)
            assert.strictEqual(answered.keepAlive, "timeout=1")
            const idleSince = Date.now()
            yield* Effect.promise(() => new Promise((resolve) => answered.socket.once("close", resolve)))
            assert.isBelow(Date.now() - idleSince, 5_000, "the idle connection closed after its timeout (and Node's second)")
          }))
          agent.destroy()

          const bad = yield* chamber(["serve", "--port", "0", "--json"], { CHAMBER_KEEP_ALIVE_TIMEOUT: "500ms" })
          assert.deepStrictEqual([bad.code, JSON.parse(bad.stderr)], [1, {
            error: `CHAMBER_KEEP_ALIVE_TIMEOUT must be a duration of a second or more, such as 65s or 10m, not "500ms".`
          }])
        }), 120_000)

      if (rt.name === "postgres") {
        it.effect("DATABASE_PIPELINE out of range: serve, relay and a command refuse it, saying what it takes; exit 1", () =>
          Effect.gen(function*() {
            const error = `DATABASE_PIPELINE must be a whole number from 1 to 32, not "lots".`
            for (const args of [["serve", "--port", "0"], ["relay"], ["tenant", "list"]]) {
              const r = yield* chamber([...args, "--json"], { DATABASE_PIPELINE: "lots" })
              assert.deepStrictEqual([r.code, JSON.parse(r.stderr)], [1, { error }], args[0])
            }
            const text = yield* chamber(["tenant", "list"], { DATABASE_PIPELINE: "0" })
            assert.deepStrictEqual([text.code, text.stderr], [1, `error: DATABASE_PIPELINE must be a whole number from 1 to 32, not "0".\n`])
            const one = yield* chamber(["tenant", "list", "--json"], { DATABASE_PIPELINE: "1" })
            assert.strictEqual(one.code, 0, one.stderr)
          }), 60_000)
      }

      it.effect("a port in use or a host it cannot bind: says which, and how to choose another; exit 1", () =>
        Effect.gen(function*() {
          const port = yield* freePort()
          const taken = net.createServer()
          yield* Effect.acquireRelease(
            Effect.promise(() => new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", resolve))),
            () => Effect.promise(() => new Promise<void>((resolve) => taken.close(() => resolve())))
          )
          const message = `Port ${port} is already in use on 127.0.0.1. Choose another with --port or PORT.`
          const text = yield* chamber(["serve", "--port", String(port)])
          assert.deepStrictEqual([text.code, text.stderr], [1, `error: ${message}\n`])
          const asJson = yield* chamber(["serve", "--json"], { PORT: String(port) })
          assert.deepStrictEqual([asJson.code, asJson.stdout, JSON.parse(asJson.stderr)], [1, "", { error: message }])

          // 192.0.2.1 (TEST-NET-1) is no address of this machine.
          const host = yield* chamber(["serve", "--port", "0", "--host", "192.0.2.1", "--json"])
          assert.deepStrictEqual([host.code, JSON.parse(host.stderr)], [1, {
            error: "Cannot listen on host 192.0.2.1: it is not an address of this machine. Choose another with --host or HOST " +
              "(127.0.0.1 for this machine only, 0.0.0.0 for every interface)."
          }])
        }), 120_000)

      it.effect(`PGlite is loaded ${rt.name === "postgres" ? "nowhere" : "by the process that owns the database"}`, () =>
        Effect.gen(function*() {
          const log = join(yield* tempDir("modules"), "pglite-modules")
          const server = yield* serving([], { NODE_OPTIONS: `--import ${MODULE_LOG}`, CHAMBER_TEST_MODULE_LOG: log })
          assert.strictEqual((yield* get(server.port, "/readyz", "")).status, 200)
          const loaded = existsSync(log) ? readFileSync(log, "utf8") : ""
          if (rt.name === "postgres") assert.strictEqual(loaded, "")
          else assert.include(loaded, "@electric-sql/pglite/dist/index.js")
        }))

      it.effect("LOG_FORMAT=json: every line on stdout is one JSON log object", () =>
        Effect.gen(function*() {
          const { key } = yield* demo
          const server = yield* serving([], { LOG_FORMAT: "json" })
          assert.strictEqual((yield* get(server.port, "/api/v1/me", key)).status, 200)
          server.child.kill("SIGTERM")
          assert.strictEqual(yield* Effect.promise(() => server.exited), 0)
          const lines = server.stdout().trimEnd().split("\n").map((l) => JSON.parse(l) as { message: unknown; level: string; annotations: Record<string, unknown> })
          const messages = lines.map((l) => l.message)
          assert.include(messages, `Chamber Data API on http://127.0.0.1:${server.port}/api/v1`)
          assert.include(messages, "Stopped")
          const started = lines.find((l) => String(l.message).startsWith("Chamber Data API on"))!
          assert.deepInclude(started, { level: "INFO" })
          assert.strictEqual(started.annotations.docs, `http://127.0.0.1:${server.port}/docs`)

          const bad = yield* chamber(["serve", "--port", "0"], { LOG_FORMAT: "xml" })
          assert.deepStrictEqual([bad.code, bad.stderr], [1, `error: LOG_FORMAT must be text or json, not "xml".\n`])
        }), 120_000)

      it.effect("LOG_LEVEL=debug: how long the database took to open (embedded) and to migrate", () =>
        Effect.gen(function*() {
          const server = yield* serving([], { LOG_FORMAT: "json", LOG_LEVEL: "debug" })
          server.child.kill("SIGTERM")
          assert.strictEqual(yield* Effect.promise(() => server.exited), 0)
          const lines = server.stdout().trimEnd().split("\n").map((l) => JSON.parse(l) as { message: unknown; level: string; annotations: Record<string, unknown> })
          const migrated = lines.find((l) => l.message === "migrations applied")
          assert.deepInclude(migrated, { level: "DEBUG" })
          assert.isNumber(migrated!.annotations.ms)
          assert.isNumber(migrated!.annotations.applied)
          const opened = lines.find((l) => l.message === "embedded database open")
          if (rt.name === "postgres") assert.isUndefined(opened)
          else {
            assert.isNumber(opened?.annotations.ms)
            assert.strictEqual(opened?.annotations.owner, true)
          }
        }), 120_000)
    })
  })
}

describe("the chamber command introduces itself", () => {
  const run = (args: ReadonlyArray<string>) => Effect.runPromise(chamber(args).pipe(Effect.provideService(Env, {})))

  it("--version prints the product's version", async () => {
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
    assert.match(version, /^\d+\.\d+\.\d+/)
    for (const flag of ["--version", "-V"]) assert.deepStrictEqual(await run([flag]), { code: 0, stdout: `${version}\n`, stderr: "" })
  })

  it("key mint --help lists every scope and the read and all shorthands, with an example", async () => {
    const help = await run(["key", "mint", "--help"])
    assert.strictEqual(help.code, 0)
    const scopes = /\nScopes:\n((?: {2}\S+\n)+)/.exec(help.stdout)?.[1]?.trim().split(/\s+/)
    assert.deepStrictEqual(scopes, [...ALL_SCOPES])
    assert.match(help.stdout, new RegExp(`\\n {2}read +every :read scope but bookings:read \\(${READ_SCOPES.length} scopes\\)\\n`))
    assert.match(help.stdout, new RegExp(`\\n {2}all +every scope \\(${ALL_SCOPES.length}\\)\\n`))
    assert.match(help.stdout, /\nExamples:\n {2}\$ chamber key mint --tenant chm_\S+ --as \S+ --name \S+ --scopes read\n/)
  })

  it("every command's help ends with an example; usage errors stay JSON with --json", async () => {
    const commands = [[], ["serve"], ["migrate"], ["demo"], ["tenant"], ["tenant", "create"], ["tenant", "list"], ["user"],
      ["user", "add"], ["user", "list"], ["export"], ["key"], ["key", "mint"], ["key", "list"], ["key", "revoke"], ["field"], ["field", "add"], ["secrets"], ["secrets", "rekey"]]
    const usage = [["tenant", "list", "--bogus", "--json"], ["user", "list", "--json"], ["tenant", "list", "--bogus"]]
    // No database is touched: the commands run side by side.
    const results = await Effect.runPromise(
      Effect.forEach([...commands.map((command) => [...command, "--help"]), ...usage], (args) => chamber(args), { concurrency: 4 })
        .pipe(Effect.provideService(Env, {}))
    )
    commands.forEach((command, i) => {
      assert.strictEqual(results[i]!.code, 0, command.join(" "))
      assert.match(results[i]!.stdout, /\nExamples?:\n(?: {2}\$ (?:\S+=\S+ )*chamber .+\n)+$/, command.join(" ") || "chamber")
    })
    assert.deepStrictEqual(results.slice(commands.length), [
      { code: 1, stdout: "", stderr: `{"error":"unknown option '--bogus'"}\n` },
      { code: 1, stdout: "", stderr: `{"error":"required option '--tenant <id>' not specified"}\n` },
      { code: 1, stdout: "", stderr: "error: unknown option '--bogus'\n" }
    ])
  })
})
