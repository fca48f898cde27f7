/** How far `chamber tenant delete` is, on stderr (docs/cli.md "Deleting a chamber"): rows removed of all, by table. */
import type { RemovalProgress } from "@chamber/core"
import { countProgress } from "./CountProgress.ts"

/** `stream` is stderr; `terminal` whether it is one; `clock` in milliseconds. */
export const removalProgress = (stream: { write(s: string): unknown }, terminal: boolean, clock: () => number = Date.now) => {
  const shown = countProgress({ verb: "Deleting", unit: "rows", unitEverywhere: true }, stream, terminal, clock)
  return {
    tell: (event: RemovalProgress) => shown.tell({ done: event.done, total: event.total, where: event.table }),
    end: shown.end
  }
}
