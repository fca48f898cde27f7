/**
 * Imports that stopped half-way (docs/architecture.md "On the embedded database: slices under a
 * hold"): an import killed between slices leaves its hold, and the rows it marks stay hidden (and
 * its chamber's feed stops at the hold's fence) until the hold is discarded. `chamber serve` looks
 * for such holds every `everyMs`; each `chamber import` looks once before it writes. A hold counts
 * as abandoned once its process is gone, or once no slice has touched it for ABANDONED_AFTER (far
 * longer than any slice takes).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ImportHolds } from "./ImportHolds.ts"

export const ABANDONED_AFTER = "2 minutes"

/** Discards the abandoned holds; answers how many. */
export const sweepAbandonedImports = Effect.gen(function*() {
  const holds = yield* ImportHolds
  return holds.sliced ? yield* holds.sweep(ABANDONED_AFTER) : 0
})

export const ImportSweeper = (everyMs = 30_000) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const holds = yield* ImportHolds
    if (!holds.sliced) return
    const round = sweepAbandonedImports.pipe(
      Effect.provideService(ImportHolds, holds),
      Effect.tap((imports) =>
        imports === 0 ? Effect.void : Effect.logWarning("import: discarded the rows of imports that stopped before publishing").pipe(Effect.annotateLogs({ imports }))
      ),
      Effect.catchDefect((defect) => Effect.logWarning("import: looking for stopped imports failed; trying again later", defect))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(round, Effect.sleep(everyMs))))
  }))
