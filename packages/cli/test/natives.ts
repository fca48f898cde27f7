/**
 * A script run in a new Node process with V8's natives syntax (`%GetOptimizationStatus`,
 * `%DebugPrint`), for tests that read what V8 made of the code: written to a directory of its
 * own in the temp directory, which is removed afterwards.
 */
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { tempDir } from "./tempDirs.ts"

/** What the ES module `source` printed on its standard output. */
export const runWithNatives = (name: string, source: string) =>
  Effect.scoped(Effect.flatMap(tempDir(name), (dir) =>
    Effect.promise(async () => {
      const script = join(dir, `${name}.mjs`)
      writeFileSync(script, source)
      const { stdout } = await promisify(execFile)(process.execPath, ["--allow-natives-syntax", script], { maxBuffer: 1 << 24 })
      return stdout
    })))
