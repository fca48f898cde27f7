/**
 * Every shell example of README.md and docs/ runs as written, in reading order, against a fresh
 * `pnpm start` (`chamber serve --demo-if-empty` on an empty embedded database), and shows what the
 * doc says it shows: the status, and each value the shown result states outright
 * (docExamples.ts has the rules the docs follow).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { allExamples, DOC_TENANT, type Example, statedPairs } from "./docExamples.ts"
import { BIN, Env, serving } from "./harness.ts"
import { tempDir } from "./tempDirs.ts"

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))

/** What the shell knows before an example runs: `curl` prints the status last, `pnpm chamber` is the CLI. */
const PRELUDE = `
curl() { command curl -sS -w '\\n%{http_code}' "$@"; }
pnpm() { if [ "$1" = chamber ]; then shift; node "$CHAMBER_BIN" "$@"; else command pnpm "$@"; fi; }
`

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const run = (example: Example, env: Record<string, string>, port: number): Ran => {
  const command = example.command.replaceAll("127.0.0.1:3000", `127.0.0.1:${port}`).replaceAll(DOC_TENANT, env.TENANT!)
  const r = spawnSync("bash", ["-c", `${PRELUDE}\n${command}`], {
    cwd: ROOT,
    env: { ...process.env, ...env, CHAMBER_BIN: BIN, NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 60_000
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const compact = (text: string): string => {
  try {
    return JSON.stringify(JSON.parse(text))
  } catch {
    return text
  }
}

/** What went wrong with one example, or undefined when it shows what the doc says. */
const mismatch = (example: Example, ran: Ran): string | undefined => {
  const where = `${example.file}:${example.line}: ${example.command.slice(0, 160)}`
  if (ran.code !== 0) return `${where}\n  exit ${ran.code}: ${ran.stderr.trim()}${ran.stdout.trim()}`
  let output = ran.stdout
  if (/^\s*curl\b/.test(example.command)) {
    const cut = output.lastIndexOf("\n")
    const status = Number(output.slice(cut + 1))
    output = output.slice(0, cut)
    const wanted = example.shown?.status
    if (wanted === undefined ? status < 200 || status > 299 : status !== wanted) {
      return `${where}\n  answered ${status} (the doc shows ${wanted ?? "a 2xx"}): ${output.slice(0, 400)}`
    }
  }
  // A command's --json document is pretty-printed; the docs show it on one line.
  output = compact(output)
  const missing = statedPairs(example.shown?.text ?? "").filter((pair) => !output.includes(pair))
  return missing.length === 0 ? undefined : `${where}\n  the doc shows ${missing.join(", ")}; it printed ${output.slice(0, 600)}`
}

const DemoDir = Layer.effect(Env, Effect.map(tempDir("docs"), (dir) => ({ CHAMBER_DATA_DIR: join(dir, "data"), DATABASE_URL: "" })))

describe("the examples in README.md and docs/", () => {
  it("are found: the README's first requests and the API's, the webhooks' and the CLI's", () => {
    const files = new Set(allExamples(ROOT).map((e) => e.file))
    for (const file of ["README.md", "docs/api.md", "docs/webhooks.md", "docs/cli.md"]) assert.isTrue(files.has(file), file)
  })

  it.live("run in order on a fresh pnpm start and show what the docs show", () =>
    Effect.gen(function*() {
      const server = yield* serving(["--demo-if-empty"])
      const key = /API key \(shown once, keep it\): (cck_\w+)/.exec(server.stdout())?.[1]
      const tenant = /\((chm_\w+)\), \d+ members/.exec(server.stdout())?.[1]
      assert.isDefined(key, `pnpm start printed no key: ${server.stdout()}`)
      assert.isDefined(tenant, `pnpm start printed no chamber id: ${server.stdout()}`)
      const env = { ...(yield* Env), KEY: key!, TENANT: tenant! }
      const failures: Array<string> = []
      const examples = allExamples(ROOT)
      for (const example of examples) {
        const problem = mismatch(example, run(example, env, server.port))
        if (problem !== undefined) failures.push(problem)
      }
      assert.deepStrictEqual(failures, [], `${failures.length} of ${examples.length} examples do not run as written:\n${failures.join("\n")}`)
    }).pipe(Effect.scoped, Effect.provide(DemoDir)), 240_000)
})
