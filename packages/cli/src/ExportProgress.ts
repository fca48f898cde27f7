/**
 * How far `chamber export` is, on stderr (docs/cli.md "Export"), as the import shows its own: on a
 * terminal, one line redrawn at most every 100 ms; elsewhere (a log file, a pipe), a line every
 * 5 s. Both say the records written of all, the collection being read and the rate.
 */
import type { ExportProgressEvent } from "@chamber/core"
import { durationText } from "./ImportProgress.ts"

const REDRAW_MS = 100
const LINE_MS = 5_000
const RATE_AFTER_MS = 1_000
const BAR = 30

const count = (n: number) => n.toLocaleString("en-US")

/** `stream` is stderr; `terminal` whether it is one; `clock` in milliseconds. */
export const exportProgress = (stream: { write(s: string): unknown }, terminal: boolean, clock: () => number = Date.now) => {
  const began = clock()
  let last = terminal ? -Infinity : began
  let open = false

  const speed = ({ done, total }: ExportProgressEvent, now: number) => {
    const elapsed = now - began
    if (elapsed < RATE_AFTER_MS || done === 0) return ""
    const rate = (done * 1000) / elapsed
    return done === total
      ? `, ${count(Math.round(rate))} a second, done in ${durationText(elapsed / 1000)}`
      : `, ${count(Math.round(rate))} a second, about ${durationText((total - done) / rate)} left`
  }

  return {
    tell(event: ExportProgressEvent) {
      if (event.total === 0) return
      const now = clock()
      const end = event.done === event.total
      if (terminal) {
        if (!end && event.done !== 0 && now - last < REDRAW_MS) return
        last = now
        const filled = Math.round((event.done / event.total) * BAR)
        stream.write(`\rExporting [${"#".repeat(filled)}${"-".repeat(BAR - filled)}] ${count(event.done)}/${count(event.total)}  ${event.collection}${speed(event, now)}\x1b[K${end ? "\n" : ""}`)
        open = !end
      } else if (!end && now - last >= LINE_MS) {
        last = now
        stream.write(`Exporting: ${count(event.done)} of ${count(event.total)} records (${event.collection})${speed(event, now)}\n`)
      }
    },
    /** Ends a line left open on the terminal (the export stopped before its end). */
    end() {
      if (open) stream.write("\n")
      open = false
    }
  }
}
