/**
 * The served OpenAPI document passes the linters integrators run, offline, with 0 errors: Spectral
 * with its `spectral:oas` ruleset and `redocly lint` with its built-in recommended one, no rule
 * disabled. Their warnings are printed: info-contact and info-license (the product names no
 * contact or licence), and Spectral's oas3-operation-security-defined, which expects scopes only
 * of OAuth schemes while OpenAPI 3.1 lets a bearer requirement list the roles it needs (here the
 * key's scope, docs/api.md "Authentication and scopes").
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Document, type RulesetDefinition, Spectral } from "@stoplight/spectral-core"
import Parsers from "@stoplight/spectral-parsers"
import { oas } from "@stoplight/spectral-rulesets"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { pgliteRuntime } from "@chamber/pg-adapter/testing"
import { call, serverOn } from "./fixture.ts"

interface Problem {
  readonly ruleId: string
  readonly severity: "error" | "warn"
  readonly message: string
  readonly location: ReadonlyArray<{ readonly pointer?: string }>
}

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const redocly = join(dirname(createRequire(import.meta.url).resolve("@redocly/cli/package.json")), "bin/cli.js")
const show = (p: Problem) => `${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(", ")}`

const servedText = Effect.map(call("GET", "/api/v1/openapi.json"), (reply) => {
  assert.strictEqual(reply.status, 200)
  return reply.text
})

/** Spectral's severities: 0 error, 1 warning, 2 information, 3 hint. */
const ERROR = 0

layer(serverOn(pgliteRuntime), { timeout: 120_000 })((it) => {
  it.effect("the served OpenAPI document has no redocly lint errors (recommended)", () =>
    Effect.gen(function*() {
      const text = yield* servedText
      const dir = mkdtempSync(join(tmpdir(), "chamber-openapi-"))
      try {
        const file = join(dir, "openapi.json")
        writeFileSync(file, text)
        // Run from the repo root so a future root redocly.yaml applies; no telemetry, no update check.
        // Run without blocking this process: the server under test keeps serving (and closing its
        // idle connections) meanwhile, so the next request does not meet a connection cut mid-reuse.
        const run = yield* Effect.promise(() =>
          new Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
            execFile(process.execPath, [redocly, "lint", "--format=json", "--max-problems=1000", file], {
              cwd: repoRoot,
              encoding: "utf8",
              maxBuffer: 64 * 1024 * 1024,
              env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
            }, (error, stdout, stderr) => resolve({ status: error === null ? 0 : (typeof error.code === "number" ? error.code : 1), stdout, stderr }))
          })
        )
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
    }), 60_000)

  it.effect("the served OpenAPI document has no Spectral errors (spectral:oas)", () =>
    Effect.gen(function*() {
      const text = yield* servedText
      const spectral = new Spectral()
      // The rulesets package types its rules' severities as plain strings, looser than a ruleset definition.
      spectral.setRuleset({ extends: [[oas as RulesetDefinition, "recommended"]] })
      const results = yield* Effect.promise(() => spectral.run(new Document(text, Parsers.Json, "openapi.json")))
      const line = (r: (typeof results)[number]) => `${r.code}: ${r.message} at ${r.path.join(".")}`
      const warnings = results.filter((r) => r.severity !== ERROR)
      if (warnings.length > 0) console.log(`Spectral warnings:\n${[...new Set(warnings.map((r) => `${r.code}: ${r.message}`))].join("\n")}`)
      const errors = results.filter((r) => r.severity === ERROR)
      assert.strictEqual(errors.length, 0, `Spectral errors:\n${errors.map(line).join("\n")}`)
      // The same run reports an error the document would have: without its `info`, the schema rule fails.
      const { info: _info, ...broken } = JSON.parse(text)
      const brokenResults = yield* Effect.promise(() => spectral.run(new Document(JSON.stringify(broken), Parsers.Json, "broken.json")))
      assert.isTrue(brokenResults.some((r) => r.severity === ERROR), "Spectral finds no error in a document without info")
    }), 60_000)
})
