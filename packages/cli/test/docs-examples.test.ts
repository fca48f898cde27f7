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

/** One block's commands in one shell, in order; what each printed and how it exited. */
const runBlock = (examples: ReadonlyArray<Example>, env: Record<string, string>, port: number): ReadonlyArray<Ran> => {
  const local = (command: string) => command.replaceAll("127.0.0.1:3000", `127.0.0.1:${port}`).replaceAll(DOC_TENANT, env.TENANT!)
  const script = examples.map((e, i) =>
    `${local(e.command)}\n__status=$?; printf '\\n${MARK}%d %d\\n' ${i} $__status >&2; printf '\\n${MARK}%d\\n' ${i}`
  ).join("\n")
  const r = spawnSync("bash", ["-c", `${PRELUDE}\n${script}`], {
    cwd: ROOT,
    env: { ...process.env, ...env, CHAMBER_BIN: BIN, NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 120_000
  })
  const cut = (text: string) => text.split(new RegExp(`\\n${MARK}\\d+[^\\n]*\\n`))
  const outs = cut(r.stdout)
  const errs = cut(r.stderr)
  const codes = [...r.stderr.matchAll(new RegExp(`${MARK}\\d+ (\\d+)`, "g"))].map((m) => Number(m[1]))
  return examples.map((_, i) => ({ code: codes[i] ?? r.status, stdout: outs[i] ?? "", stderr: errs[i] ?? r.stderr }))
}

const MARK = "__docs_example_done_"

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
      const blocks = new Map<string, Array<Example>>()
      for (const example of examples) {
        const id = `${example.file}:${example.block}`
        blocks.set(id, [...(blocks.get(id) ?? []), example])
      }
      for (const block of blocks.values()) {
        const ran = runBlock(block, env, server.port)
        block.forEach((example, i) => {
          const problem = mismatch(example, ran[i]!)
          if (problem !== undefined) failures.push(problem)
        })
      }
      assert.deepStrictEqual(failures, [], `${failures.length} of ${examples.length} examples do not run as written:\n${failures.join("\n")}`)
    }).pipe(Effect.scoped, Effect.provide(DemoDir)), 240_000)
})
