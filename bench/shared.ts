/**
 * Bits shared by the bench scripts: where the product code lives (the bench sits outside the
 * workspace packages, so it imports their sources by path) and how a child server reports its port.
 */
import { readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

/** The line a server prints on stdout once it listens: `BENCH_LISTENING <port>`. */
export const LISTENING = "BENCH_LISTENING"

/** The `chamber` command's own Node flags: every server and relay of ours starts with them, as the installed command runs. */
export const CHAMBER_NODE_FLAGS: ReadonlyArray<string> = (() => {
  const first = readFileSync(new URL("../packages/cli/src/bin.ts", import.meta.url), "utf8").split("\n", 1)[0]!
  const flags = /^#!\/usr\/bin\/env -S node((?: --\S+)*)$/.exec(first)?.[1]
  if (flags === undefined) throw new Error(`cli/src/bin.ts's first line is not "#!/usr/bin/env -S node <flags>": ${first}`)
  return flags.trim().split(" ").filter(Boolean)
})()

/** BENCH_KEEP_ACCESS_LOG=1: the access logs the servers of ours wrote stay in the temp directory after the run. */
export const KEEP_ACCESS_LOG = process.env.BENCH_KEEP_ACCESS_LOG === "1"

/**
 * The file in the temp directory a server of ours appends its access log to, named after `name`:
 * removed when the script exits (a whole bench writes some 90 MB), unless KEEP_ACCESS_LOG.
 */
export const accessLogFile = (name: string): string => {
  const path = join(tmpdir(), `${name}-access.log`)
  if (!KEEP_ACCESS_LOG) process.once("exit", () => rmSync(path, { force: true }))
  return path
}

/** The same max DB connections for both servers. */
export const POOL_SIZE = Number(process.env.BENCH_POOL_SIZE ?? 10)

/**
 * Imports a dependency of one of the workspace packages (e.g. `@effect/platform-node`, which the
 * root does not depend on) exactly as that package resolves it, so there is one copy of `effect`.
 */
export const importFromPackage = async (pkg: string, specifier: string): Promise<any> => {
  const require = createRequire(new URL(`../packages/${pkg}/package.json`, import.meta.url))
  return import(pathToFileURL(require.resolve(specifier)).href)
}

/** What a section of `pnpm bench` run after the HTTP endpoints gets from run.ts. */
export interface SectionContext {
  /** The bench database. */
  readonly dbUrl: string
  readonly log: (line: string) => void
  /** Seconds since the bench began, for progress lines. */
  readonly elapsed: () => string
}
