/**
 * The `chamber` command's own Node flags, as its first line names them (bin.ts,
 * docs/operations.md "Memory"): what the bench starts its servers of ours with and what tests
 * expect `pnpm start` to run with. A first line of another shape is an error, not "no flags".
 */
import { readFileSync } from "node:fs"

export const chamberNodeFlags = (): ReadonlyArray<string> => {
  const first = readFileSync(new URL("./bin.ts", import.meta.url), "utf8").split("\n", 1)[0]!
  const flags = /^#!\/usr\/bin\/env -S node((?: --\S+)*)$/.exec(first)?.[1]
  if (flags === undefined) throw new Error(`cli/src/bin.ts's first line is not "#!/usr/bin/env -S node <flags>": ${first}`)
  return flags.trim().split(" ").filter(Boolean)
}
