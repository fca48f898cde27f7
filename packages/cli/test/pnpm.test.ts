/**
 * README's machine-readable CLI: `pnpm chamber <command> --json | jq .`. Run through the pnpm on
 * PATH, from the repository root, stdout is the command's JSON document and nothing else (no pnpm
 * banner before it), on an empty embedded database. And README's `pnpm start` runs Node with the
 * command's own option (bin.ts's first line; docs/operations.md "Memory").
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
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

  it.effect("`pnpm start` serves with the chamber command's own Node option (bin.ts's first line)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("pnpm")
      const wanted = /^#!\/usr\/bin\/env -S node (.+)$/.exec(readFileSync(join(ROOT, "packages/cli/src/bin.ts"), "utf8").split("\n", 1)[0]!)?.[1]
      assert.isDefined(wanted, "bin.ts's first line names no Node option")
      const serving = yield* Effect.acquireUseRelease(
        Effect.sync(() =>
          spawn("pnpm", ["start"], {
            cwd: ROOT,
            detached: true,
            env: shellEnv({ CHAMBER_DATA_DIR: join(dir, "data"), DATABASE_URL: "", PORT: "0", LOG_FORMAT: "json", NO_COLOR: "1" })
          })
        ),
        (child) =>
          Effect.promise(() =>
            new Promise<string>((resolve, reject) => {
              let out = ""
              child.stdout.on("data", (d) => {
                out += d
                if (!out.includes("Chamber Data API on")) return
                // The process group pnpm leads holds the Node process that serves: its command line.
                const ps = execFileSync("ps", ["-o", "args=", "-g", String(child.pid)], { encoding: "utf8" })
                resolve(ps.split("\n").find((line) => line.includes("bin.ts serve")) ?? ps)
              })
              child.on("error", (e) => reject(new Error(`${e.message} (is pnpm on PATH?)`)))
              child.on("close", (code) => reject(new Error(`pnpm start exited (${code}) before it listened:\n${out}`)))
            })
          ),
        (child) => Effect.sync(() => child.pid === undefined || process.kill(-child.pid, "SIGTERM"))
      )
      assert.include(serving, ` ${wanted} `)
    }), 120_000)
})
