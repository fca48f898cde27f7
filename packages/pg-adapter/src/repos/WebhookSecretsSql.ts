/**
 * The stored webhook secrets as a whole (docs/webhooks.md "Secrets"): the check `chamber serve`
 * and `chamber relay` make at start, that this process's keys open them, and `chamber secrets
 * rekey`, which re-encrypts them all under CHAMBER_SECRET_KEY.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { WebhookSecrets } from "@chamber/core"
import { DAMAGED, isSealedWith, secretKeysConfig, webhookSecrets } from "./WebhookSecretsNode.ts"

const listed = (ids: ReadonlyArray<number>) => ids.length <= 10 ? ids.join(", ") : `${ids.slice(0, 10).join(", ")} and ${ids.length - 10} more`

/**
 * Stored secrets sealed with a key this process does not have: CHAMBER_SECRET_KEY is not the key
 * that encrypted them, or is not set. A server or relay refuses to start on it.
 */
export class SecretKeyMismatch extends Schema.TaggedError<SecretKeyMismatch>()("SecretKeyMismatch", {
  /** The subscriptions whose secret no key of this process opens. */
  subscriptions: Schema.Array(Schema.Number),
  keySet: Schema.Boolean
}) {
  override get message() {
    const which = `the secret${this.subscriptions.length === 1 ? " of subscription" : "s of subscriptions"} ${listed(this.subscriptions)}`
    return this.keySet
      ? `CHAMBER_SECRET_KEY does not decrypt the stored webhook secrets: they were encrypted with another key (${which}). ` +
        `Set CHAMBER_SECRET_KEY to the key that encrypted them (while changing keys, set that one as CHAMBER_SECRET_KEY_PREVIOUS: ` +
        `docs/webhooks.md "Rotating CHAMBER_SECRET_KEY").`
      : `Webhook secrets are stored encrypted (${which}), but CHAMBER_SECRET_KEY is not set. Set it to the key that encrypted them.`
  }
}

/** `chamber secrets rekey` without the key to encrypt with. */
export class NoSecretKey extends Schema.TaggedError<NoSecretKey>()("NoSecretKey", {}) {
  override get message() {
    return "CHAMBER_SECRET_KEY is not set: set it to the key to encrypt the webhook secrets with, " +
      "and CHAMBER_SECRET_KEY_PREVIOUS to the key they are encrypted with now."
  }
}

interface Row {
  readonly id: number | bigint | string
  readonly secret: string
}

/** What this process's keys make of the stored secrets. */
export interface SecretsSurvey {
  /** Each secret opened, by subscription id. */
  readonly opened: ReadonlyMap<number, string>
  /** Subscriptions whose secret is sealed with a key this process lacks. */
  readonly foreign: ReadonlyArray<number>
  /** Subscriptions whose secret is damaged: sealed with a key this process has, which does not open it. */
  readonly damaged: ReadonlyArray<number>
  /** Whether this process has a key at all (CHAMBER_SECRET_KEY or CHAMBER_SECRET_KEY_PREVIOUS). */
  readonly keySet: boolean
}

/**
 * A `v1:` secret (no key id) that no key opens is sealed with another key, unless another `v1:`
 * secret opens: then the key is right and this one is damaged.
 */
export const surveySecrets = (secrets: WebhookSecrets["Service"], rows: ReadonlyArray<Row>): SecretsSurvey => {
  const opened = new Map<number, string>()
  const failed: Array<{ readonly id: number; readonly reason: string }> = []
  let v1Opened = false
  for (const row of rows) {
    const id = Number(row.id)
    const secret = secrets.open(row.secret)
    if (Result.isSuccess(secret)) {
      opened.set(id, secret.success)
      if (row.secret.startsWith("v1:")) v1Opened = true
    } else {
      failed.push({ id, reason: secret.failure.reason })
    }
  }
  const isForeign = (reason: string) => reason === "no-key" || reason === "other-key" || (reason === "undecryptable" && !v1Opened)
  return {
    opened,
    foreign: failed.filter((f) => isForeign(f.reason)).map((f) => f.id),
    damaged: failed.filter((f) => !isForeign(f.reason)).map((f) => f.id),
    keySet: !failed.some((f) => f.reason === "no-key")
  }
}

/**
 * The start's check: fails with SecretKeyMismatch when a stored secret is sealed with a key this
 * process lacks; else the subscriptions whose secret is damaged (their deliveries fail, the
 * others go on).
 */
export const checkStoredSecrets = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const secrets = yield* WebhookSecrets
  const rows = yield* sql<Row>`SELECT id, secret FROM webhook_subscriptions WHERE secret NOT LIKE 'plain:%' ORDER BY id`.pipe(Effect.orDie)
  const survey = surveySecrets(secrets, rows)
  if (survey.foreign.length > 0) return yield* new SecretKeyMismatch({ subscriptions: survey.foreign, keySet: survey.keySet })
  return { damaged: survey.damaged }
})

/** Rows one UPDATE re-encrypts at most. */
const REKEY_BATCH = 1_000

/**
 * Every stored secret that CHAMBER_SECRET_KEY or CHAMBER_SECRET_KEY_PREVIOUS opens, encrypted
 * under CHAMBER_SECRET_KEY, in one transaction (the rows locked meanwhile, so a subscription
 * posted at the same moment waits). Nothing changes when a secret is sealed with neither key.
 * A damaged secret is marked so (its stored form kept after `damaged:`) and named: once the old
 * key is gone it would otherwise read as one of another key, and stop every start. A rotated
 * secret's previous one (ruling 31) is re-encrypted while it still signs, dropped otherwise.
 */
export const rekeyStoredSecrets = Effect.gen(function*() {
  const keys = yield* Effect.orDie(secretKeysConfig)
  const current = keys.current ?? ""
  if (current === "") return yield* new NoSecretKey()
  const secrets = webhookSecrets(keys)
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    const locked = yield* sql<Row & { readonly previous: string | null }>`
      SELECT id, secret, CASE WHEN previous_expires_at > now() THEN previous_secret END AS previous
      FROM webhook_subscriptions ORDER BY id FOR UPDATE`
    const rows: ReadonlyArray<Row> = locked
    const survey = surveySecrets(secrets, rows)
    if (survey.foreign.length > 0) return yield* new SecretKeyMismatch({ subscriptions: survey.foreign, keySet: true })
    const damaged = new Set(survey.damaged)
    const changed = rows.flatMap((r) => {
      const id = Number(r.id)
      if (damaged.has(id)) return r.secret.startsWith(DAMAGED) ? [] : [{ id, secret: DAMAGED + r.secret }]
      const secret = survey.opened.get(id)
      return secret === undefined || isSealedWith(r.secret, current) ? [] : [{ id, secret: secrets.seal(secret) }]
    })
    for (let i = 0; i < changed.length; i += REKEY_BATCH) {
      yield* sql`
        UPDATE webhook_subscriptions s SET secret = v.secret
        FROM jsonb_to_recordset(${JSON.stringify(changed.slice(i, i + REKEY_BATCH))}::jsonb) AS v(id bigint, secret text)
        WHERE s.id = v.id`
    }
    // A rotated secret's previous one still signing is re-encrypted too; one that no key opens, or
    // whose overlap has ended, is dropped: it only ever adds a second signature.
    const previous = locked.flatMap((r): Array<{ readonly id: number; readonly secret: string | null }> => {
      if (r.previous === null) return []
      const opened = secrets.open(r.previous)
      if (Result.isFailure(opened)) return [{ id: Number(r.id), secret: null }]
      return isSealedWith(r.previous, current) ? [] : [{ id: Number(r.id), secret: secrets.seal(opened.success) }]
    })
    for (let i = 0; i < previous.length; i += REKEY_BATCH) {
      yield* sql`
        UPDATE webhook_subscriptions s SET previous_secret = v.secret, previous_expires_at = CASE WHEN v.secret IS NULL THEN NULL ELSE s.previous_expires_at END
        FROM jsonb_to_recordset(${JSON.stringify(previous.slice(i, i + REKEY_BATCH))}::jsonb) AS v(id bigint, secret text)
        WHERE s.id = v.id`
    }
    yield* sql`UPDATE webhook_subscriptions SET previous_secret = NULL, previous_expires_at = NULL WHERE previous_expires_at <= now()`
    const rekeyed = changed.length - changed.filter((c) => damaged.has(c.id)).length
    return { rekeyed, unchanged: survey.opened.size - rekeyed, damaged: survey.damaged }
  })).pipe(Effect.catchTag("SqlError", Effect.die))
})
