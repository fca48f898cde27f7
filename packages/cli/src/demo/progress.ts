/** Progress of the demo seed on stderr, so stdout stays the command's answer. */
import type { ImportProgressEvent } from "@chamber/core"

let shown = ""

export const demoProgress = ({ phase, done, total, collection }: ImportProgressEvent) => {
  if (phase !== "writing" || done === 0) return
  if (shown === "") process.stderr.write(`Creating the demo chamber (${total} records):`)
  if (collection !== shown) {
    process.stderr.write(` ${collection}`)
    shown = collection
  }
  if (done === total) process.stderr.write(". Done.\n")
}
