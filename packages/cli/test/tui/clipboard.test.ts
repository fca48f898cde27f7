/**
 * `chamber tui` in a real pseudo-terminal (util-linux `script`), the test playing the terminal
 * (docs/admin.md "Minting a key"): the TUI asks for the device attributes; a terminal that
 * lists 52 (it takes OSC 52 clipboard writes) gets the minted key on its clipboard, one that
 * does not gets nothing but the key on screen. Embedded PGlite. Fails, never skips, without `script`.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn, spawnSync } from "node:child_process"
import { pgliteRuntime } from "@chamber/pg-adapter/testing"
import { BIN, chamber, Env, envLayer, json } from "../harness.ts"

const ASKED = "\x1b[c"
const CLIPBOARD = /\x1b\]52;c;([A-Za-z0-9+/=]*)\x07/
/** Colours and cursor moves: what is left is the text and any OSC sequence. */
const CSI = /\x1b\[[0-9;?]*[A-Za-z]/g

/** The TUI in a pseudo-terminal that answers its device attributes question with `attributes`; keys typed one read at a time. */
const terminal = (tenant: string, attributes: string) =>
  Effect.gen(function*() {
    const probe = spawnSync("script", ["--version"], { encoding: "utf8" })
    if (probe.error !== undefined) throw new Error(`util-linux script is needed for this test and could not run: ${probe.error.message}`)
    const env: NodeJS.ProcessEnv = { ...process.env, ...(yield* Env), REDIS_URL: "", TERM: "xterm-256color" }
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn("script", ["-qfec", `'${process.execPath}' '${BIN}' tui --tenant ${tenant}`, "/dev/null"], { env })),
      (c) => Effect.sync(() => void (c.exitCode === null && c.kill("SIGKILL")))
    )
    let output = ""
    child.stdout.on("data", (d: Buffer) => {
      const before = output
      output += d.toString("utf8")
      if (!before.includes(ASKED) && output.includes(ASKED)) child.stdin.write(attributes)
    })
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
    const until = (pattern: RegExp, timeoutMs = 30_000) =>
      Effect.promise(async () => {
        for (const started = Date.now(); !pattern.test(output.replace(CSI, ""));) {
          if (Date.now() - started > timeoutMs) throw new Error(`no ${pattern} from the TUI within ${timeoutMs} ms: ${JSON.stringify(output.replace(CSI, "").slice(-1500))}`)
          await new Promise((r) => setTimeout(r, 50))
        }
        return output.replace(CSI, "")
      })
    const keys = (...typed: ReadonlyArray<string>) =>
      Effect.promise(async () => {
        for (const k of typed) {
          child.stdin.write(k)
          await new Promise((r) => setTimeout(r, 150))
        }
      })
    return { until, keys, exited }
  })

describe("chamber tui in a pseudo-terminal", () => {
  layer(envLayer(pgliteRuntime), { timeout: 120_000 })((it) => {
    it.effect("copies a minted key with OSC 52 when the terminal lists 52 in its device attributes, and not otherwise", () =>
      Effect.gen(function*() {
        const tenant = json(yield* chamber(["tenant", "create", "--name", "Clipboard Chamber", "--json"])).id as string
        json(yield* chamber(["user", "add", "--tenant", tenant, "--email", "ops@clip.example", "--role", "chamber_admin", "--json"]))
        const mint = (tui: Effect.Success<ReturnType<typeof terminal>>, name: string) =>
          Effect.gen(function*() {
            yield* tui.until(/n mint/)
            yield* tui.keys("n", name, "\r")
            yield* tui.until(/› ops@clip\.example/)
            yield* tui.keys("\r", "a", "\r", "\r", "y")
            yield* tui.until(new RegExp(`Minted ${name} \\(cck_\\w{8}\\)[\\s\\S]*enter or esc: done`))
            yield* tui.keys("\r", "q")
            assert.strictEqual(yield* Effect.promise(() => tui.exited), 0)
            // Everything the TUI wrote, from its question to the terminal to its last frame.
            return yield* tui.until(/$/)
          })

        const shown = yield* mint(yield* terminal(tenant, "\x1b[?62;22;52c"), "Copied")
        const copied = CLIPBOARD.exec(shown)
        assert.isNotNull(copied, "an OSC 52 write")
        const key = Buffer.from(copied![1]!, "base64").toString("utf8")
        assert.match(key, /^cck_[0-9A-Za-z]{40}$/)
        assert.include(shown, key, "the key on the clipboard is the one on screen")
        assert.include(shown, "Copied to your clipboard")
        const keys = json(yield* chamber(["key", "list", "--tenant", tenant, "--json"]))
        assert.deepStrictEqual(keys.map((k: { name: string; prefix: string }) => [k.name, k.prefix]), [["Copied", key.slice(0, 12)]])

        const plain = yield* mint(yield* terminal(tenant, "\x1b[?62;22c"), "Plain")
        assert.notMatch(plain, /\x1b\]52;/)
        assert.include(plain, "Select it with the mouse and copy it")
      }), 120_000)
  })
})
