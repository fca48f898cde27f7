/**
 * How far a long command is, on stderr, as the import shows its own (docs/cli.md "Export",
 * "Deleting a chamber"): on a terminal, one line redrawn at most every 100 ms; elsewhere (a log
 * file, a pipe), a line every 5 s. Both say how many of all are done, where the command is (a
 * collection, a table) and, once a second has passed, the rate and the time left.
 */
import { durationText } from "./ImportProgress.ts"

const REDRAW_MS = 100
const LINE_MS = 5_000
const RATE_AFTER_MS = 1_000
const BAR = 30

const count = (n: number) => n.toLocaleString("en-US")

export interface CountProgressEvent {
  readonly done: number
  readonly total: number
  /** The collection or table being worked on. */
  readonly where: string
}

export interface CountWords {
  /** `Exporting`, `Deleting`. */
  readonly verb: string
  /** What is counted: `records`, `rows`. */
  readonly unit: string
  /** Whether the unit is said on the terminal's bar and in the rate too (`2,000/3,000 rows`, `500 rows a second`). */
  readonly unitEverywhere: boolean
}

/** `stream` is stderr; `terminal` whether it is one; `clock` in milliseconds. */
export const countProgress = (
  words: CountWords,
  stream: { write(s: string): unknown },
  terminal: boolean,
  clock: () => number = Date.now
) => {
  const began = clock()
  const unit = words.unitEverywhere ? ` ${words.unit}` : ""
  let last = terminal ? -Infinity : began
  let open = false

  const speed = ({ done, total }: CountProgressEvent, now: number) => {
    const elapsed = now - began
    if (elapsed < RATE_AFTER_MS || done === 0) return ""
    const rate = (done * 1000) / elapsed
    return done === total
      ? `, ${count(Math.round(rate))}${unit} a second, done in ${durationText(elapsed / 1000)}`
      : `, ${count(Math.round(rate))}${unit} a second, about ${durationText((total - done) / rate)} left`
  }

  return {
    tell(event: CountProgressEvent) {
      const now = clock()
      const end = event.done === event.total
      if (terminal) {
        if (!end && event.done !== 0 && now - last < REDRAW_MS) return
        last = now
        const filled = Math.round((event.done / Math.max(event.total, 1)) * BAR)
        stream.write(
          `\r${words.verb} [${"#".repeat(filled)}${"-".repeat(BAR - filled)}] ${count(event.done)}/${count(event.total)}${unit}  ${event.where}` +
            `${speed(event, now)}\x1b[K${end ? "\n" : ""}`
        )
        open = !end
      } else if (!end && now - last >= LINE_MS) {
        last = now
        stream.write(`${words.verb}: ${count(event.done)} of ${count(event.total)} ${words.unit} (${event.where})${speed(event, now)}\n`)
      }
    },
    /** Ends a line left open on the terminal (the command stopped before its end). */
    end() {
      if (open) stream.write("\n")
      open = false
    }
  }
}
