/**
 * Retention of the change feed (CHAMBER_EVENT_RETENTION, docs/api.md "Change feed"): run by
 * `chamber serve`, every `everyMs` it prunes the events older than the retention, in batches.
 * A failed round (the database away) is logged and tried again at the next.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Changes } from "./Changes.ts"

export const ChangesPruner = (retentionMs: number, everyMs = 60 * 60 * 1000) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const changes = yield* Changes
    const round = Effect.suspend(() => changes.prune(new Date(Date.now() - retentionMs))).pipe(
      Effect.catchDefect((defect) => Effect.logWarning("change feed: pruning failed; trying again later", defect))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(round, Effect.sleep(everyMs))))
  }))
