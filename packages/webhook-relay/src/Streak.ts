/**
 * A task tried again and again (a write, a claim, a renewal, LISTEN): its first failure is logged
 * as a warning and its first success after that at info, so an outage is two log lines however
 * long it lasts.
 */
import * as Effect from "effect/Effect"

export interface Streak {
  readonly failed: (cause: unknown) => Effect.Effect<void>
  readonly succeeded: Effect.Effect<void>
}

export const makeStreak = (failedText: string, backText: string): Streak => {
  let failing = false
  return {
    failed: (cause) =>
      Effect.suspend(() => {
        if (failing) return Effect.void
        failing = true
        return Effect.logWarning(failedText, cause)
      }),
    succeeded: Effect.suspend(() => {
      if (!failing) return Effect.void
      failing = false
      return Effect.logInfo(backText)
    })
  }
}
