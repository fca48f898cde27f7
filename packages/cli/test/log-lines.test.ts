/**
 * `chamber serve`'s log lines (docs/cli.md "Logs"): the direct JSON formatter writes what Effect's
 * JSON logger writes, character for character, for the access log's lines and for any other; the
 * writer keeps lines in order, writes a turn's lines at once and a busy process's at most once an
 * interval, and loses none at exit.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { formatJsonLine, lineWriter, linesLogger, WRITE_INTERVAL_MS } from "../src/LogLines.ts"

/**
 * The lines of the same log calls by our formatter, by `chamber serve`'s JSON logger (through its
 * writer, which makes a plain line's text when it writes), and by Effect's JSON formatter.
 */
const linesOf = (program: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const ours: Array<string> = []
    const effects: Array<string> = []
    const chunks: Array<string> = []
    const served = linesLogger("json", lineWriter((chunk) => void chunks.push(chunk)))
    const all = Logger.make<unknown, void>((options) => {
      ours.push(formatJsonLine.log(options))
      effects.push(Logger.formatJson.log(options))
      served.log(options)
    })
    yield* program.pipe(Effect.provide(Logger.layer([all])))
    yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
    return { ours, effects, written: chunks.join("").split("\n").slice(0, -1) }
  })

describe("chamber serve's log lines", () => {
  it.effect("the access log's line, and lines with spans, objects, secrets, causes and several messages, as Effect writes them", () =>
    Effect.gen(function*() {
      const { effects, ours, written } = yield* linesOf(Effect.gen(function*() {
        yield* Effect.logInfo("request").pipe(Effect.annotateLogs({
          method: "GET",
          path: "/api/v1/members?page=1",
          status: 200,
          duration_ms: 1.5,
          key_prefix: null,
          ok: true
        }), Effect.annotateLogs("request_id", "abc-123"))
        yield* Effect.logWarning("quoted \"text\"\nand a newline, émoji 🎉").pipe(Effect.withLogSpan("claim"))
        yield* Effect.logInfo("an object").pipe(Effect.annotateLogs({ detail: { nested: [1, 2] } }))
        yield* Effect.logInfo("a secret").pipe(Effect.annotateLogs({ token: Redacted.make("s3cret") }))
        yield* Effect.logError("failed", Cause.fail(new Error("boom")))
        yield* Effect.logInfo("two", "messages")
        yield* Effect.logInfo(42)
        yield* Effect.logInfo("not finite").pipe(Effect.annotateLogs({ n: Number.NaN }))
        // The front door's way: the access line's fields are added to the object earlier lines carried.
        const request: Record<string, unknown> = { request_id: "r-1" }
        yield* Effect.gen(function*() {
          yield* Effect.logWarning("during the request")
          request.status = 200
          yield* Effect.logInfo("request")
        }).pipe(Effect.provideService(References.CurrentLogAnnotations, request))
      }))
      assert.strictEqual(ours.length, 10)
      assert.deepStrictEqual(ours, effects)
      assert.deepStrictEqual(written, effects, "as chamber serve writes them, in order")
      assert.notInclude(ours.join("\n"), "s3cret")
      assert.deepInclude(JSON.parse(ours[0]!), {
        message: "request",
        level: "INFO",
        annotations: { request_id: "abc-123", method: "GET", path: "/api/v1/members?page=1", status: 200, duration_ms: 1.5, key_prefix: null, ok: true }
      })
    }))

  it("no key or webhook secret reaches a line, in JSON or text, whatever logged it: a message, an annotation, a cause", () =>
    Effect.gen(function*() {
      const key = `cck_${"Z9y8X7w6V5".repeat(4)}`
      const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw5dL4Y6sZtQ0="
      const program = Effect.gen(function*() {
        yield* Effect.logInfo("request").pipe(Effect.annotateLogs({ path: `/api/v1/members?api_key=abc&name=${key}`, status: 404 }))
        yield* Effect.logWarning(`a receiver answered with ${secret}`)
        yield* Effect.logError("failed", Cause.fail(new Error(`no member ${key}`)))
        yield* Effect.logInfo("an object").pipe(Effect.annotateLogs({ detail: { types: [secret] } }))
      })
      for (const format of ["json", "text"] as const) {
        const chunks: Array<string> = []
        yield* program.pipe(Effect.provide(Logger.layer([linesLogger(format, lineWriter((chunk) => void chunks.push(chunk)))])))
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        const written = chunks.join("")
        assert.strictEqual(written.split("\n").length, 5, written)
        assert.notInclude(written, key.slice(4), format)
        assert.notInclude(written, secret.slice(6), format)
        assert.notInclude(written, "api_key=abc", format)
        assert.include(written, "api_key=[redacted]", format)
        assert.strictEqual(written.match(/\[redacted\]/g)?.length, 5, written)
        if (format === "json") for (const line of written.trimEnd().split("\n")) JSON.parse(line)
      }
    }))

  it("writes a quiet turn's lines in one write on the next turn, in order; a busy writer's at most once an interval", async () => {
    const writes: Array<string> = []
    const out = lineWriter((chunk) => void writes.push(chunk))
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
    out.line("one")
    out.line("two\nlines")
    out.line("three")
    assert.deepStrictEqual(writes, [])
    await nextTurn()
    assert.deepStrictEqual(writes, ["one\ntwo\nlines\nthree\n"])
    // Lines of the turns that follow a write wait for the interval's end, then go out together.
    out.line("four")
    await nextTurn()
    out.line("five")
    await nextTurn()
    assert.deepStrictEqual(writes, ["one\ntwo\nlines\nthree\n"])
    await new Promise((resolve) => setTimeout(resolve, WRITE_INTERVAL_MS + 5))
    assert.deepStrictEqual(writes, ["one\ntwo\nlines\nthree\n", "four\nfive\n"])
    // Quiet again for an interval: the next line goes out on the next turn.
    await new Promise((resolve) => setTimeout(resolve, WRITE_INTERVAL_MS + 5))
    out.line("six")
    await nextTurn()
    assert.deepStrictEqual(writes.at(-1), "six\n")
  })

  it("writes what is pending when the process exits", () => {
    const module = fileURLToPath(new URL("../src/LogLines.ts", import.meta.url))
    const script = `import { stdoutLines } from ${JSON.stringify(module)}
      for (let i = 0; i < 1000; i++) stdoutLines().line("line " + i)
      process.exit(3)`
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })
    assert.strictEqual(run.status, 3, run.stderr)
    const lines = run.stdout.trimEnd().split("\n")
    assert.strictEqual(lines.length, 1000)
    assert.deepStrictEqual([lines[0], lines[999]], ["line 0", "line 999"])
  })
})
