/** Infrastructure ports every service may need. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import type { WebhookSecretUnreadable } from "../webhook/HookErrors.ts"

/** Runs an effect in one database transaction: all of its writes commit together or none do. */
export class Transactor extends Context.Service<Transactor, {
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("chamber/Transactor") {}

/**
 * True while the work runs inside a transaction its caller opened for it and rolls back whole on
 * any failure (an HTTP request whose answer is kept with its change): `Transactor.withTransaction`
 * then joins that transaction instead of nesting a savepoint in it.
 */
export const JoinsCallerTransaction = Context.Reference<boolean>("chamber/JoinsCallerTransaction", { defaultValue: () => false })

/**
 * A row locked for an update in this transaction, read once: every stored field (hidden custom
 * fields and write-only fields too), for telling what a write changes, and what the API shows of
 * it, for telling whether that changed (core `outbox/Shown.ts`).
 */
export interface Locked<Stored, Shown> {
  readonly stored: Stored
  readonly shown: Shown
}

/** SHA-256 of an API key's plaintext, lower-case hex. */
export class KeyHasher extends Context.Service<KeyHasher, {
  readonly hash: (plaintext: string) => string
}>()("chamber/KeyHasher") {}

/** Whether the database answers, within a second (GET /readyz). */
export class Readiness extends Context.Service<Readiness, {
  readonly check: Effect.Effect<boolean>
}>()("chamber/Readiness") {}

/**
 * Webhook signing secrets (ruling 23): a new one is `whsec_` + 32 random bytes in base64; stored
 * sealed (encrypted when CHAMBER_SECRET_KEY is set) and opened again for the relay to sign, or
 * found unreadable (the server lacks the key that sealed it, or the stored form is damaged).
 */
export class WebhookSecrets extends Context.Service<WebhookSecrets, {
  readonly generate: () => string
  readonly seal: (secret: string) => string
  readonly open: (stored: string) => Result.Result<string, WebhookSecretUnreadable>
}>()("chamber/WebhookSecrets") {}
