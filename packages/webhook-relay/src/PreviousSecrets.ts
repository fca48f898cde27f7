/**
 * A subscription's previous secret while a rotation's overlap lasts (ruling 31), for the relay to
 * sign with beside the secret its claim returned. Kept per subscription with the secret it was
 * read beside: a rotation changes that secret, so the next delivery reads the subscription again
 * and nothing stale signs; the overlap's end is checked at each delivery. One read per
 * subscription and secret, not one per delivery.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"
import { WebhookSecrets } from "@chamber/core"

interface Known {
  readonly secret: string
  readonly previous: string | null
  /** Unix milliseconds. */
  readonly until: number
}

const KEPT = 10_000

/** `(hookId, secret)` to the previous secret that signs beside `secret` now, or null. */
export type PreviousSecretOf = (hookId: number, secret: string) => Effect.Effect<string | null>

export const makePreviousSecrets: Effect.Effect<PreviousSecretOf, never, SqlClient.SqlClient | WebhookSecrets> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const secrets = yield* WebhookSecrets
  const known = new Map<number, Known>()

  const read = (hookId: number) =>
    sql<{ readonly secret: string; readonly previous_secret: string | null; readonly until: string | null }>`
      SELECT secret, previous_secret, (extract(epoch FROM previous_expires_at) * 1000)::bigint::text AS until
      FROM webhook_subscriptions WHERE id = ${hookId}`.pipe(
      Effect.map((rows): Known | undefined => {
        const r = rows[0]
        if (r === undefined) return undefined
        const secret = secrets.open(r.secret)
        if (Result.isFailure(secret)) return undefined
        const previous = r.previous_secret === null || r.until === null ? null : Result.getOrNull(secrets.open(r.previous_secret))
        return { secret: secret.success, previous, until: previous === null ? 0 : Number(r.until) }
      })
    )

  const current = (entry: Known) => (entry.previous !== null && Date.now() < entry.until ? entry.previous : null)

  return (hookId, secret) =>
    Effect.suspend(() => {
      const entry = known.get(hookId)
      if (entry !== undefined && entry.secret === secret) return Effect.succeed(current(entry))
      return read(hookId).pipe(
        Effect.map((fresh) => {
          // Read beside another secret (rotated since the claim): the claimed one signs alone.
          if (fresh === undefined || fresh.secret !== secret) return null
          if (known.size >= KEPT) known.clear()
          known.set(hookId, fresh)
          return current(fresh)
        }),
        // Without the database the delivery is still signed, with its secret alone.
        Effect.catchCause(() => Effect.succeed(null))
      )
    })
})
