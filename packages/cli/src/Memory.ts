/**
 * Memory a long-running command gives back once it has started (bench/README.md "Idle memory"):
 * starting (loading modules, migrating, seeding the demo) grows V8's young generation to its
 * largest, 64 MB that an idle server would otherwise keep. One garbage collection that reduces
 * memory, as V8 does under memory pressure, returns it; traffic grows it again as it needs.
 */
import * as Effect from "effect/Effect"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

type Collect = (options: { readonly type: "major"; readonly execution: "sync"; readonly flavor: "last-resort" }) => void

/** V8's collector, reached the way Node documents for `--expose-gc`, without exposing it globally. */
const collector = (): Collect | undefined => {
  try {
    setFlagsFromString("--expose-gc")
    const gc = runInNewContext("gc") as Collect
    setFlagsFromString("--no-expose-gc")
    return gc
  } catch {
    return undefined
  }
}

/** Once started: collect everything collectable and shrink the heap to what is live. */
export const settleMemory = Effect.sync(() => {
  collector()?.({ type: "major", execution: "sync", flavor: "last-resort" })
})
