/**
 * README's machine-readable CLI: `pnpm chamber <command> --json | jq .`. Run through the pnpm on
 * PATH, from the repository root, stdout is the command's JSON document and nothing else (no pnpm
 * banner before it), on an empty embedded database. And README's `pnpm start` runs Node with the
 * command's own flags (bin.ts's first line; docs/operations.md "Memory").
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chamberNodeFlags } from "../src/NodeFlags.ts"
import { tempDir } from "./tempDirs.ts"

const ROOT = fileURLToPath(new URL("../../..", import.meta.url))

/**
 * The environment of a shell someone types into: what a surrounding `pnpm test` hands its scripts
 * (npm_config_*, npm_lifecycle_*, pnpm_config_*, ...) is dropped, since it would configure the
 * pnpm under test, e.g. an inherited reporter setting could hide a banner.
 */
const INHERITED_FROM_PNPM =
  /^(npm_config_|npm_lifecycle_|npm_package_|pnpm_config_)|^(npm_command|npm_execpath|npm_node_execpath|INIT_CWD|PNPM_SCRIPT_SRC_DIR)$/

const shellEnv = (extra: Record<string, string>) => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !INHERITED_FROM_PNPM.test(k)) env[k] = v
  }
  return { ...env, ...extra }
}

const pnpm = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.promise(() =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn("pnpm", args, { cwd: ROOT, env: shellEnv(env) })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d) => (stdout += d))
      child.stderr.on("data", (d) => (stderr += d))
      child.on("error", (e) => resolve({ code: null, stdout, stderr: `${stderr}${e.message} (is pnpm on PATH?)` }))
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })
  )

describe("pnpm chamber through the pnpm on PATH", () => {
  it.effect("`pnpm chamber tenant list --json` prints nothing but the JSON document on stdout", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("pnpm")
      const r = yield* pnpm(["chamber", "tenant", "list", "--json"], {
        CHAMBER_DATA_DIR: join(dir, "data"),
        DATABASE_URL: "",
        NO_COLOR: "1"
      })
      assert.strictEqual(r.code, 0, `exit ${r.code}: ${r.stderr}`)
      let parsed: unknown
      try {
        parsed = JSON.parse(r.stdout)
      } catch {
        assert.fail(`stdout is not one JSON document:\n${r.stdout}`)
      }
      assert.deepStrictEqual(parsed, [])
    }), 60_000)

  it.effect("`pnpm start` serves with the chamber command's own Node flags, and settles its memory once it listens", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("pnpm")
      const settled = yield* Effect.acquireUseRelease(
        Effect.sync(() =>
          spawn("pnpm", ["start"], {
            cwd: ROOT,
            detached: true,
            env: shellEnv({ CHAMBER_DATA_DIR: join(dir, "data"), DATABASE_URL: "", PORT: "0", LOG_FORMAT: "json", LOG_LEVEL: "debug", NO_COLOR: "1" })
          })
        ),
        (child) =>
          Effect.promise(() =>
            new Promise<Record<string, unknown>>((resolve, reject) => {
              let out = ""
              let read = 0
              child.stdout.on("data", (d) => {
                out += d
                // Whole lines only: a chunk may end inside one.
                const end = out.lastIndexOf("\n") + 1
                for (const line of out.slice(read, end).split("\n")) {
                  if (!line.startsWith("{")) continue
                  const parsed = JSON.parse(line) as { message: string; annotations: Record<string, unknown> }
                  if (parsed.message === "memory settled") resolve(parsed.annotations)
                }
                read = end
              })
              child.on("close", (code) => reject(new Error(`pnpm start exited (${code}) before settling its memory:\n${out}`)))
            })
          ),
        (child) => Effect.sync(() => process.kill(-child.pid!, "SIGTERM"))
      )
      assert.strictEqual(settled.node_flags, chamberNodeFlags().join(" "))
      assert.isNumber(settled.rss_mb)
    }), 120_000)
})
