/**
 * The stored webhook secrets as a whole (docs/webhooks.md "Secrets"): the check `chamber serve`
 * and `chamber relay` make at start, that this process's keys open them, and their part of
 * `chamber secrets rekey` (SecretsRekey.ts), which re-encrypts them under CHAMBER_SECRET_KEY.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { WebhookSecrets } from "@chamber/core"
import { DAMAGED, isSealedWith } from "./WebhookSecretsNode.ts"

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

/** A survey made a page at a time: the failures are kept, the secrets opened only counted. */
class Survey {
  readonly failed: Array<{ readonly id: number; readonly reason: string }> = []
  v1Opened = false

  /** Adds a row; its secret opened, or undefined. */
  add(secrets: WebhookSecrets["Service"], row: Row): string | undefined {
    const secret = secrets.open(row.secret)
    if (Result.isSuccess(secret)) {
      if (row.secret.startsWith("v1:")) this.v1Opened = true
      return secret.success
    }
    this.failed.push({ id: Number(row.id), reason: secret.failure.reason })
    return undefined
  }

  /**
   * A `v1:` secret (no key id) that no key opens is sealed with another key, unless another `v1:`
   * secret opens: then the key is right and this one is damaged.
   */
  isForeign(reason: string): boolean {
    return reason === "no-key" || reason === "other-key" || (reason === "undecryptable" && !this.v1Opened)
  }

  get foreign() {
    return this.failed.filter((f) => this.isForeign(f.reason)).map((f) => f.id)
  }

  get damaged() {
    return this.failed.filter((f) => !this.isForeign(f.reason)).map((f) => f.id)
  }

  get keySet() {
    return !this.failed.some((f) => f.reason === "no-key")
  }
}

/** What `secrets`' keys make of the rows' secrets (see Survey.isForeign for `v1:` ones). */
export const surveySecrets = (secrets: WebhookSecrets["Service"], rows: ReadonlyArray<Row>): SecretsSurvey => {
  const survey = new Survey()
  const opened = new Map<number, string>()
  for (const row of rows) {
    const secret = survey.add(secrets, row)
    if (secret !== undefined) opened.set(Number(row.id), secret)
  }
  return { opened, foreign: survey.foreign, damaged: survey.damaged, keySet: survey.keySet }
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

/** Subscriptions one transaction of rekey reads, locks and re-encrypts at most. */
const REKEY_BATCH = 500

/** What rekey did to the subscriptions' secrets. */
export interface SubscriptionSecretsRekeyed {
  /** Secrets re-encrypted under the new key, and those that already were under it. */
  readonly rekeyed: number
  readonly unchanged: number
  /** Subscriptions whose secret is damaged (marked so, not re-encrypted). */
  readonly damaged: ReadonlyArray<number>
  /** A rotated secret's previous one (ruling 31): re-encrypted while it still signs, already under the new key, dropped. */
  readonly previous: { readonly rekeyed: number; readonly unchanged: number; readonly dropped: number }
}

interface LockedRow extends Row {
  readonly previous_secret: string | null
  readonly previous_live: boolean | null
}

/**
 * Every subscription's secret that `secrets` opens, encrypted under `current` (the text of
 * CHAMBER_SECRET_KEY, which `secrets` seals with), a page of subscriptions per transaction, so
 * that a server running meanwhile waits at most for one page's rows. Nothing changes when a secret
 * is sealed with a key `secrets` lacks (a first pass, without locks, finds those). A secret already
 * under `current` is left as it is, so a run that was interrupted is finished by running it again.
 * A damaged secret is marked so (its stored form kept after `damaged:`) and named: once the old
 * key is gone it would otherwise read as one of another key, and stop every start. A rotated
 * secret's previous one is re-encrypted while it still signs, dropped otherwise (it only ever adds
 * a second signature).
 */
export const rekeySubscriptionSecrets = Effect.fnUntraced(function*(secrets: WebhookSecrets["Service"], current: string) {
  const sql = yield* SqlClient.SqlClient
  const survey = new Survey()
  for (let after = 0;;) {
    const rows = yield* sql<Row>`SELECT id, secret FROM webhook_subscriptions WHERE id > ${after} ORDER BY id LIMIT ${REKEY_BATCH}`
    for (const row of rows) survey.add(secrets, row)
    if (rows.length < REKEY_BATCH) break
    after = Number(rows.at(-1)!.id)
  }
  if (survey.foreign.length > 0) return yield* new SecretKeyMismatch({ subscriptions: survey.foreign, keySet: true })

  let rekeyed = 0
  let unchanged = 0
  const damaged: Array<number> = []
  const previous = { rekeyed: 0, unchanged: 0, dropped: 0 }
  for (let after = 0;;) {
    const page = yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<LockedRow>`
        SELECT id, secret, previous_secret, previous_expires_at > now() AS previous_live
        FROM webhook_subscriptions WHERE id > ${after} ORDER BY id LIMIT ${REKEY_BATCH} FOR UPDATE`
      const changed: Array<{ readonly id: number; readonly secret: string; readonly previous: string | null }> = []
      for (const row of rows) {
        const id = Number(row.id)
        let secret = row.secret
        const opened = secrets.open(row.secret)
        if (Result.isSuccess(opened)) {
          if (isSealedWith(row.secret, current)) unchanged++
          else (secret = secrets.seal(opened.success), rekeyed++)
        } else if (!survey.isForeign(opened.failure.reason)) {
          damaged.push(id)
          if (!row.secret.startsWith(DAMAGED)) secret = DAMAGED + row.secret
        }
        // Sealed with a key this process lacks since the first pass (by a process with a third
        // key): left as it is, for the start's check to name.
        let previousSecret = row.previous_secret
        if (previousSecret !== null) {
          const opened = row.previous_live === true ? secrets.open(previousSecret) : undefined
          if (opened === undefined || Result.isFailure(opened)) (previousSecret = null, previous.dropped++)
          else if (isSealedWith(previousSecret, current)) previous.unchanged++
          else (previousSecret = secrets.seal(opened.success), previous.rekeyed++)
        }
        if (secret !== row.secret || previousSecret !== row.previous_secret) changed.push({ id, secret, previous: previousSecret })
      }
      if (changed.length > 0) {
        yield* sql`
          UPDATE webhook_subscriptions s
          SET secret = v.secret, previous_secret = v.previous,
              previous_expires_at = CASE WHEN v.previous IS NULL THEN NULL ELSE s.previous_expires_at END
          FROM jsonb_to_recordset(${JSON.stringify(changed)}::jsonb) AS v(id bigint, secret text, previous text)
          WHERE s.id = v.id`
      }
      return rows
    }))
    if (page.length < REKEY_BATCH) break
    after = Number(page.at(-1)!.id)
  }
  return { rekeyed, unchanged, damaged, previous } satisfies SubscriptionSecretsRekeyed
})
