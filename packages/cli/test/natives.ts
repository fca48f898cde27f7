/**
 * A script run in a new Node process with V8's natives syntax (`%GetOptimizationStatus`,
 * `%DebugPrint`), for tests that read what V8 made of the code: written to a directory of its
 * own in the temp directory, which is removed afterwards.
 */
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"

/** What the ES module `source` printed on its standard output. */
export const runWithNatives = (name: string, source: string) =>
  Effect.promise(async () => {
    const dir = mkdtempSync(join(tmpdir(), `chamber-${name}-`))
    const script = join(dir, `${name}.mjs`)
    writeFileSync(script, source)
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ["--allow-natives-syntax", script], { maxBuffer: 1 << 24 })
      return stdout
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
