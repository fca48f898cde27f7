/** How far `chamber export` is, on stderr (docs/cli.md "Export"): records written of all, by collection. */
import type { ExportProgressEvent } from "@chamber/core"
import { countProgress } from "./CountProgress.ts"

/** `stream` is stderr; `terminal` whether it is one; `clock` in milliseconds. */
export const exportProgress = (stream: { write(s: string): unknown }, terminal: boolean, clock: () => number = Date.now) => {
  const shown = countProgress({ verb: "Exporting", unit: "records", unitEverywhere: false }, stream, terminal, clock)
  return {
    tell: (event: ExportProgressEvent) => event.total === 0 ? undefined : shown.tell({ done: event.done, total: event.total, where: event.collection }),
    end: shown.end
  }
}
