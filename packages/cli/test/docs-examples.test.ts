/**
 * Every shell example of README.md and docs/ runs as written, in reading order, against a fresh
 * server on an empty embedded database with the demo chamber (what `pnpm start` makes), and shows
 * what the doc says it shows: the status, and each value the shown result states outright
 * (docExamples.ts has the rules the docs follow).
 *
 * The database is not quite the demo's: before the demo is loaded every id sequence is moved to a
 * start of its own (2000, 3000, ...), so no row has the id it has after `pnpm start`, and no two
 * tables share ids. An example that names a literal id (`/hooks/1`) instead of one taken from an
 * earlier answer fails here, as it would act on another row of a reader's own database.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { allExamples, DOC_TENANT, type Example, statedPairs } from "./docExamples.ts"
import { BIN, chamber, Env, json, serving } from "./harness.ts"
import { tempDir } from "./tempDirs.ts"

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))

const MARK = "__docs_example_done_"
const STATUS = "__docs_example_status_"

/**
 * What the shell knows before an example runs: `curl` tells the status, and its own errors, on
 * descriptor 3, a file of the block's (so that its output can still be piped, and an answer an
 * example shows on stderr is never cut by a status), `pnpm chamber` is the CLI. Its stderr is a
 * pipe, as a terminal's output can be opened again: `tee /dev/stderr` cannot open the socket
 * Node hands a child.
 */
const PRELUDE = `
exec 2> >(cat >&2)
exec 3>>"$CURL_LOG"
curl() { command curl -sS -w '%{stderr}${STATUS}%{http_code}\\n' "$@" 2>&3; }
pnpm() { if [ "$1" = chamber ]; then shift; node "$CHAMBER_BIN" "$@"; else command pnpm "$@"; fi; }
`

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** What its curls said on descriptor 3: a status line each, and their errors. */
  readonly curl: string
}

/** One block's commands in one shell, in order; what each printed and how it exited. */
const runBlock = (examples: ReadonlyArray<Example>, env: Record<string, string>, port: number): ReadonlyArray<Ran> => {
  const local = (command: string) => command.replaceAll("127.0.0.1:3000", `127.0.0.1:${port}`).replaceAll(DOC_TENANT, env.TENANT!)
  const script = examples.map((e, i) =>
    `${local(e.command)}\n__status=$?; printf '\\n${MARK}%d %d\\n' ${i} $__status >&2; printf '\\n${MARK}%d\\n' ${i}; printf '\\n${MARK}%d\\n' ${i} >&3`
  ).join("\n")
  const curlLog = join(mkdtempSync(join(tmpdir(), "docs-curl-")), "curl.log")
  const r = spawnSync("bash", ["-c", `${PRELUDE}\n${script}`], {
    cwd: ROOT,
    // PORT: the server's, as a reader who started it on another port sets it (README's `${PORT:-3000}`).
    env: { ...process.env, ...env, PORT: String(port), CHAMBER_BIN: BIN, NO_COLOR: "1", CURL_LOG: curlLog },
    encoding: "utf8",
    timeout: 120_000
  })
  const curls = readFileSync(curlLog, "utf8")
  rmSync(dirname(curlLog), { recursive: true, force: true })
  const cut = (text: string) => text.split(new RegExp(`\\n${MARK}\\d+[^\\n]*\\n`))
  const outs = cut(r.stdout)
  const errs = cut(r.stderr)
  const curled = cut(curls)
  const codes = [...r.stderr.matchAll(new RegExp(`${MARK}\\d+ (\\d+)`, "g"))].map((m) => Number(m[1]))
  return examples.map((_, i) => ({ code: codes[i] ?? r.status, stdout: outs[i] ?? "", stderr: errs[i] ?? r.stderr, curl: curled[i] ?? "" }))
}


/** A command that keeps something of a curl's answer in a variable. */
const CAPTURE = /^\s*[A-Z_][A-Z0-9_]*=\$\(\s*curl\b/

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
  if (ran.code !== 0) return `${where}\n  exit ${ran.code}: ${ran.curl.trim()}${ran.stderr.trim()}${ran.stdout.trim()}`
  // `VAR=$(curl … | tee /dev/stderr | jq …)` keeps an id of the answer and shows the answer on stderr.
  const captured = CAPTURE.test(example.command)
  let output = captured ? ran.stderr : ran.stdout
  if (captured || /^\s*curl\b/.test(example.command)) {
    const statuses = [...ran.curl.matchAll(new RegExp(`${STATUS}(\\d+)`, "g"))]
    const status = Number(statuses.at(-1)?.[1])
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

/** Every sequence of the embedded database served from `dataDir` moved to a start of its own: the k-th (by name) to 1000 * (k + 2). */
const shiftSequences = (dataDir: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ host: dataDir, port: 5432, user: "postgres", database: "postgres" })
    await client.connect()
    try {
      const { rows } = await client.query<{ readonly name: string }>(
        "SELECT format('%I.%I', schemaname, sequencename) AS name FROM pg_sequences ORDER BY schemaname, sequencename"
      )
      for (const [k, { name }] of rows.entries()) await client.query("SELECT setval($1::regclass, $2, false)", [name, 1000 * (k + 2)])
      return rows.length
    } finally {
      await client.end()
    }
  })

const DemoDir = Layer.effect(Env, Effect.map(tempDir("docs"), (dir) => ({ CHAMBER_DATA_DIR: join(dir, "data"), DATABASE_URL: "" })))

describe("the examples in README.md and docs/", () => {
  it("are found: the README's first requests and the API's, the webhooks' and the CLI's", () => {
    const files = new Set(allExamples(ROOT).map((e) => e.file))
    for (const file of ["README.md", "docs/api.md", "docs/webhooks.md", "docs/cli.md"]) assert.isTrue(files.has(file), file)
  })

  it.live("run in order on the demo chamber, its ids shifted, and show what the docs show", () =>
    Effect.gen(function*() {
      const server = yield* serving()
      const shifted = yield* shiftSequences((yield* Env).CHAMBER_DATA_DIR!)
      assert.isAtLeast(shifted, 10, "the id sequences")
      // What `pnpm start` seeds on an empty database, through the running server's database.
      const demo = json(yield* chamber(["demo", "--json"]))
      const key: string = demo.key
      const tenant: string = demo.tenant.id
      assert.match(key, /^cck_\w+$/, "the demo's key")
      assert.match(tenant, /^chm_\w+$/, "the demo's chamber id")
      const env = { ...(yield* Env), KEY: key, TENANT: tenant }
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
