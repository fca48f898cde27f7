/**
 * `chamber tui` as a command (docs/cli.md, docs/admin.md): its help ends with an example; it
 * needs a terminal and says so; `--json` is refused the --json way. None of it touches a database.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { BIN } from "../harness.ts"

const run = (args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1", DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe("chamber tui, the command", () => {
  it("--help shows --tenant and ends with examples", () => {
    const help = run(["tui", "--help"])
    assert.strictEqual(help.code, 0)
    assert.match(help.stdout, /--tenant <id> +the chamber to open/)
    assert.match(help.stdout, /\nExamples:\n {2}\$ chamber tui\n {2}\$ chamber tui --tenant chm_\S+\n$/)
  })

  it("needs a terminal, and --json is refused as one JSON error", () => {
    assert.deepStrictEqual(run(["tui"]), {
      code: 1,
      stdout: "",
      stderr: "error: chamber tui needs a terminal (stdin and stdout): for scripts, use key list, hooks list or deliveries list.\n"
    })
    assert.deepStrictEqual(run(["tui", "--json"]), {
      code: 1,
      stdout: "",
      stderr: `{"error":"chamber tui is interactive and has no JSON output: use key list, hooks list or deliveries list --json."}\n`
    })
  })
})
