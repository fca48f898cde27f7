/**
 * How far `chamber import` is, on stderr (docs/cli.md "Import"): on a terminal, one line redrawn
 * in place at most every 100 ms; elsewhere (a log file, a pipe), a line every 5 s. Both say the
 * pass (checking, then writing), the records done, the rate and the time left at that rate.
 */
import type { ImportProgressEvent } from "@chamber/core"

const REDRAW_MS = 100
const LINE_MS = 5_000
/** The rate is said once this much of the pass has passed, so it is not a guess from a few records. */
const RATE_AFTER_MS = 1_000
const BAR = 30

const count = (n: number) => n.toLocaleString("en-US")

/** 45 s, 2 min 05 s, 1 h 02 min. */
export const durationText = (seconds: number) => {
  const s = Math.max(0, Math.ceil(seconds))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`
}

const PHASE = { checking: "Checking", writing: "Writing" } as const

/** `stream` is stderr; `terminal` whether it is one; `clock` in milliseconds. */
export const importProgress = (stream: { write(s: string): unknown }, terminal: boolean, clock: () => number = Date.now) => {
  let phase: ImportProgressEvent["phase"] | undefined
  let began = 0
  let last = 0
  let open = false

  /** Records a second and seconds left at that rate, once the pass has run long enough to tell. */
  const pace = (done: number, total: number, now: number) => {
    const elapsed = now - began
    if (elapsed < RATE_AFTER_MS || done === 0) return undefined
    const rate = (done * 1000) / elapsed
    return { rate, left: (total - done) / rate, elapsed: elapsed / 1000 }
  }

  const bar = ({ phase, done, total, collection }: ImportProgressEvent, now: number) => {
    const filled = total === 0 ? BAR : Math.round((done / total) * BAR)
    const p = pace(done, total, now)
    const speed = p === undefined ? "" : done === total
      ? `  ${count(Math.round(p.rate))}/s, done in ${durationText(p.elapsed)}`
      : `  ${count(Math.round(p.rate))}/s, about ${durationText(p.left)} left`
    return `${PHASE[phase].padEnd(8)} [${"#".repeat(filled)}${"-".repeat(BAR - filled)}] ${count(done)}/${count(total)}  ${collection}${speed}`
  }

  const line = ({ phase, done, total, collection }: ImportProgressEvent, now: number) => {
    const p = pace(done, total, now)
    const speed = p === undefined ? "" : `, ${count(Math.round(p.rate))} a second, about ${durationText(p.left)} left`
    return `${PHASE[phase]}: ${count(done)} of ${count(total)} records (${collection})${speed}`
  }

  return {
    tell(event: ImportProgressEvent) {
      if (event.total === 0) return
      const now = clock()
      if (event.phase !== phase) {
        if (open) stream.write("\n")
        open = false
        phase = event.phase
        began = now
        last = terminal ? -Infinity : now
      }
      const end = event.done === event.total
      if (terminal) {
        if (!end && event.done !== 0 && now - last < REDRAW_MS) return
        last = now
        stream.write(`\r${bar(event, now)}\x1b[K${end ? "\n" : ""}`)
        open = !end
      } else if (!end && now - last >= LINE_MS) {
        last = now
        stream.write(`${line(event, now)}\n`)
      }
    },
    /** Ends a line left open on the terminal (the import stopped before the end of a pass). */
    end() {
      if (open) stream.write("\n")
      open = false
    }
  }
}
