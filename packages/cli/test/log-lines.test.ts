/**
 * `chamber serve`'s log lines (docs/cli.md "Logs"): Effect's JSON and logfmt lines, with no key
 * or webhook secret in them whatever logged it; written in the order they were made, notices
 * among them, none lost when the process exits.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { linesLogger } from "../src/LogLines.ts"

/** The lines of `program` as `chamber serve`'s logger writes them in `format`, and as Effect's formatter of that format makes them. */
const linesOf = (program: Effect.Effect<void>, format: "json" | "text") =>
  Effect.gen(function*() {
    const written: Array<string> = []
    const effects: Array<string> = []
    const served = linesLogger(format, (line) => void written.push(line))
    const both = Logger.make<unknown, void>((options) => {
      effects.push((format === "json" ? Logger.formatJson : Logger.formatLogFmt).log(options))
      served.log(options)
    })
    yield* program.pipe(Effect.provide(Logger.layer([both])))
    return { written, effects }
  })

describe("chamber serve's log lines", () => {
  it.effect("the access log's line, and lines with spans, objects, causes and several messages, as Effect writes them", () =>
    Effect.gen(function*() {
      const program = Effect.gen(function*() {
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
        yield* Effect.logError("failed", Cause.fail(new Error("boom")))
        yield* Effect.logInfo("two", "messages")
        yield* Effect.logInfo(42)
      })
      for (const format of ["json", "text"] as const) {
        const { effects, written } = yield* linesOf(program, format)
        assert.strictEqual(written.length, 6)
        assert.deepStrictEqual(written, effects, format)
      }
      const { written } = yield* linesOf(program, "json")
      for (const line of written) assert.hasAllKeys(JSON.parse(line), ["message", "level", "timestamp", "annotations", "spans", "fiberId", ...(line.includes("\"cause\"") ? ["cause"] : [])])
      assert.deepInclude(JSON.parse(written[0]!), {
        message: "request",
        level: "INFO",
        annotations: { request_id: "abc-123", method: "GET", path: "/api/v1/members?page=1", status: 200, duration_ms: 1.5, key_prefix: null, ok: true }
      })
    }))

  it.effect("no key or webhook secret reaches a line, in JSON or text, whatever logged it: a message, an annotation, a cause, a Redacted value", () =>
    Effect.gen(function*() {
      const key = `cck_${"Z9y8X7w6V5".repeat(4)}`
      const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw5dL4Y6sZtQ0="
      const program = Effect.gen(function*() {
        yield* Effect.logInfo("request").pipe(Effect.annotateLogs({ path: `/api/v1/members?api_key=abc&name=${key}`, status: 404 }))
        yield* Effect.logWarning(`a receiver answered with ${secret}`)
        yield* Effect.logError("failed", Cause.fail(new Error(`no member ${key}`)))
        yield* Effect.logInfo("an object").pipe(Effect.annotateLogs({ detail: { types: [secret] } }))
        yield* Effect.logInfo("a secret").pipe(Effect.annotateLogs({ token: Redacted.make("s3cret") }))
      })
      for (const format of ["json", "text"] as const) {
        const { written: lines } = yield* linesOf(program, format)
        const written = lines.join("\n")
        assert.strictEqual(lines.length, 5, written)
        assert.notInclude(written, key.slice(4), format)
        assert.notInclude(written, secret.slice(6), format)
        assert.notInclude(written, "api_key=abc", format)
        assert.notInclude(written, "s3cret", format)
        assert.include(written, "api_key=[redacted]", format)
        assert.strictEqual(written.match(/\[redacted\]/g)?.length, 5, written)
        if (format === "json") for (const line of lines) JSON.parse(line)
      }
    }))

  it.effect("text from outside is inert in a terminal: no ESC, BEL, DEL or C1 reaches a line; a JSON line still decodes to what was logged", () =>
    Effect.gen(function*() {
      // A receiver's answer carrying OSC 52 (clipboard), OSC 8 (a disguised link), a one-character CSI and DEL.
      const hostile = "\u001b]52;c;ZWNobyBwd25lZA==\u0007 \u001b]8;;https://evil.test\u001b\\click\u001b]8;;\u001b\\ \u009b2J \u007f"
      const program = Effect.logWarning(`receiver said: ${hostile}`).pipe(Effect.annotateLogs({ excerpt: hostile }))
      for (const format of ["json", "text"] as const) {
        const { written } = yield* linesOf(program, format)
        assert.strictEqual(written.length, 1)
        assert.notMatch(written[0]!, /[\u0000-\u001f\u007f-\u009f]/, format)
        if (format === "json") {
          const line = JSON.parse(written[0]!)
          assert.strictEqual(line.message, `receiver said: ${hostile}`)
          assert.strictEqual(line.annotations.excerpt, hostile)
        }
      }
    }))

  it("writes lines and notices to stdout in the order they were made, every one of them when the process exits at once, even while its reader lags", async () => {
    const module = fileURLToPath(new URL("../src/LogLines.ts", import.meta.url))
    // 1,010 lines of about 90 bytes: more than a pipe holds (64 KiB) before its reader reads.
    const script = `import * as Effect from "effect/Effect"
      import * as Logger from "effect/Logger"
      import { linesLogger, printLine } from ${JSON.stringify(module)}
      const logs = Logger.layer([linesLogger("json")])
      for (let i = 0; i < 1000; i++) {
        if (i % 100 === 0) printLine("notice " + i)
        Effect.runSync(Effect.logInfo("line " + i).pipe(Effect.provide(logs)))
      }
      process.stderr.write("exiting\\n")
      process.exit(3)`
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: fileURLToPath(new URL("..", import.meta.url)), stdio: ["ignore", "pipe", "pipe"] })
    // Nothing read from stdout until the process says it exits, or has waited 2 s on the full pipe.
    child.stdout.pause()
    const chunks: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
    let stderr = ""
    const exiting = new Promise<void>((resolve) => child.stderr.on("data", (chunk: Buffer) => (stderr += chunk) && stderr.includes("exiting") && resolve()))
    await Promise.race([exiting, new Promise((resolve) => setTimeout(resolve, 2_000))])
    child.stdout.resume()
    const status = await new Promise<number | null>((resolve) => child.on("close", resolve))
    assert.strictEqual(status, 3, stderr)
    const lines = Buffer.concat(chunks).toString("utf8").trimEnd().split("\n")
    assert.strictEqual(lines.length, 1010)
    assert.deepStrictEqual([lines[0], JSON.parse(lines[1]!).message, lines[101], JSON.parse(lines[1009]!).message], ["notice 0", "line 0", "notice 100", "line 999"])
  }, 20_000)
})
