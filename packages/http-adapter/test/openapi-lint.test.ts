// The published OpenAPI document passes `redocly lint` (built-in recommended ruleset) with 0 errors, offline.
import { assert, it } from "@effect/vitest"
import * as OpenApi from "effect/http-api/OpenApi"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Api } from "../src/Api.ts"

interface Problem {
  readonly ruleId: string
  readonly severity: "error" | "warn"
  readonly message: string
  readonly location: ReadonlyArray<{ readonly pointer?: string }>
}

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const redocly = join(dirname(createRequire(import.meta.url).resolve("@redocly/cli/package.json")), "bin/cli.js")
const show = (p: Problem) => `${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(", ")}`

it("the OpenAPI document has no redocly lint errors", () => {
  const dir = mkdtempSync(join(tmpdir(), "chamber-openapi-"))
  try {
    const file = join(dir, "openapi.json")
    writeFileSync(file, JSON.stringify(OpenApi.fromApi(Api), null, 2))
    // Run from the repo root so a future root redocly.yaml applies; no telemetry, no update check.
    const run = spawnSync(process.execPath, [redocly, "lint", "--format=json", "--max-problems=1000", file], {
      cwd: repoRoot,
      encoding: "utf8",
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
    })
    let problems: Array<Problem>
    try {
      problems = JSON.parse(run.stdout).problems
    } catch {
      return assert.fail(`redocly lint did not print JSON (exit ${run.status}):\n${run.stdout}\n${run.stderr}`)
    }
    const warnings = problems.filter((p) => p.severity === "warn")
    if (warnings.length > 0) console.log(`redocly lint warnings:\n${warnings.map(show).join("\n")}`)
    const errors = problems.filter((p) => p.severity === "error")
    assert.strictEqual(errors.length, 0, `redocly lint errors:\n${errors.map(show).join("\n")}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}, 60_000)
