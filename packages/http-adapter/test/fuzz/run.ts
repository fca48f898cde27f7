/**
 * `pnpm fuzz`: many generated hostile requests (FUZZ_COUNT, default 50,000) against the real
 * server on embedded PGlite, or on PostgreSQL when DATABASE_URL is set, with a random seed
 * (FUZZ_SEED to replay one). Prints progress, the statuses seen and every failure with its seed
 * and index; exits 1 when anything failed.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { pgliteRuntime, runtimes } from "@chamber/pg-adapter/testing"
import { serverOn, serverUrl } from "../fixture.ts"
import { fuzz, fuzzTarget } from "./fuzz.ts"

const count = Number(process.env.FUZZ_COUNT ?? 50_000)
const seed = process.env.FUZZ_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED)
const concurrency = Number(process.env.FUZZ_CONCURRENCY ?? 8)
const runtime = process.env.DATABASE_URL ? runtimes().find((rt) => rt.name === "postgres")! : pgliteRuntime

const started = Date.now()
const program = Effect.gen(function*() {
  const port = Number(new URL(yield* serverUrl).port)
  console.log(`fuzz: ${count} requests, seed ${seed}, ${concurrency} at a time, on ${runtime.name}`)
  const report = yield* fuzz({
    port,
    target: yield* fuzzTarget,
    seed,
    count,
    concurrency,
    onProgress: (sent) => console.log(`  ${sent} sent, ${((Date.now() - started) / 1000).toFixed(0)} s`)
  })
  const statuses = Object.entries(report.statuses).map(([status, n]) => `${status}: ${n}`).join(", ")
  const fivexx = Object.entries(report.statuses).filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0)
  console.log(`fuzz: ${report.sent} sent in ${((Date.now() - started) / 1000).toFixed(0)} s; statuses ${statuses}; 5xx: ${fivexx}`)
  for (const f of report.failures.slice(0, 50)) console.log(`FAIL seed ${seed} #${f.index}: ${f.problem}\n    ${f.label}`)
  console.log(report.failures.length === 0 ? `PASS: 0 failures (seed ${seed})` : `FAIL: ${report.failures.length} failures (seed ${seed}; replay with FUZZ_SEED=${seed})`)
  return report.failures.length
})

const failures = await Effect.runPromise(program.pipe(Effect.provide(serverOn(runtime)), Effect.scoped) as Effect.Effect<number>)
process.exit(failures === 0 ? 0 : 1)
