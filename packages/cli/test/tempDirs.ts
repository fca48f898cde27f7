/**
 * Directories of their own in the temp directory for the cli tests, each removed once its user is
 * done: a scope's (`tempDir`) or a test file's (`suiteDir`).
 */
import { afterAll } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const make = (prefix: string) => mkdtempSync(join(tmpdir(), `chamber-${prefix}-`))
const remove = (dir: string) => rmSync(dir, { recursive: true, force: true })

/** A directory removed when the scope closes. */
export const tempDir = (prefix: string) => Effect.acquireRelease(Effect.sync(() => make(prefix)), (dir) => Effect.sync(() => remove(dir)))

/** A directory for the whole test file, made now and removed after its suites. */
export const suiteDir = (prefix: string): string => {
  const dir = make(prefix)
  afterAll(() => remove(dir))
  return dir
}
