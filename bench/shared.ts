/**
 * Bits shared by the bench scripts: where the product code lives (the bench sits outside the
 * workspace packages, so it imports their sources by path) and how a child server reports its port.
 */
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { chamberNodeFlags } from "../packages/cli/src/NodeFlags.ts"

/** The line a server prints on stdout once it listens: `BENCH_LISTENING <port>`. */
export const LISTENING = "BENCH_LISTENING"

/** The `chamber` command's own Node flags: every server and relay of ours starts with them, as the installed command runs. */
export const CHAMBER_NODE_FLAGS = chamberNodeFlags()

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
