/**
 * The kept Idempotency-Key answers' part of `chamber secrets rekey` (table of migration 12): an
 * answer that holds a webhook secret (POST /hooks, rotate-secret) is sealed at rest like the
 * secret (core idempotency/SealedAnswers.ts), so it is re-encrypted with the secrets; otherwise a
 * retry of its request, once the old key is gone, could no longer be answered.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { openAnswer, SEALED_ANSWER_MARK, sealAnswer, sealedAnswerText, type WebhookSecrets } from "@chamber/core"
import { isSealedWith } from "./WebhookSecretsNode.ts"

/** Kept answers one transaction reads, locks and re-encrypts at most. */
const REKEY_BATCH = 500

/** What rekey did to the kept answers that hold a webhook secret. */
export interface KeptAnswersRekeyed {
  /** Re-encrypted under the new key (or encrypted, when they were kept in the clear). */
  readonly rekeyed: number
  /** Already under the new key. */
  readonly unchanged: number
  /** Sealed with a key neither key opens: left as they are, until retention prunes them. */
  readonly unreadable: number
}

interface AnswerRow {
  readonly tenant_id: number | string
  readonly api_key_id: number | string
  readonly idempotency_key: string
  readonly body: Uint8Array
}

const hex = (text: string) => Buffer.from(text, "utf8").toString("hex")
// Kept answers are JSON, so one holding a secret holds these bytes; a sealed one starts with the mark.
const SEALED_MARK_HEX = hex(SEALED_ANSWER_MARK)
const SECRET_MARK_HEX = hex("whsec_")

/**
 * Every kept answer holding a webhook secret, opened with `secrets` and sealed again under
 * `current` (the text of CHAMBER_SECRET_KEY, which `secrets` seals with), a page of answers per
 * transaction, so that a request using one of their keys meanwhile waits at most for one page.
 * An answer already under `current` is left as it is: a run that was interrupted is finished by
 * running it again. Claims whose request is still running hold no answer yet; theirs will be
 * sealed by the server that keeps it.
 */
export const rekeyKeptAnswers = Effect.fnUntraced(function*(secrets: WebhookSecrets["Service"], current: string) {
  const sql = yield* SqlClient.SqlClient
  const counts = { rekeyed: 0, unchanged: 0, unreadable: 0 }
  let after: AnswerRow | undefined
  for (;;) {
    const from = after
    const page = yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<AnswerRow>`
        SELECT tenant_id, api_key_id, idempotency_key, body FROM idempotency_keys
        WHERE ${from === undefined ? sql.literal("true") : sql`(tenant_id, api_key_id, idempotency_key) > (${from.tenant_id}::bigint, ${from.api_key_id}::bigint, ${from.idempotency_key}::text)`}
          AND owner IS NULL AND body IS NOT NULL
          AND (substring(body from 1 for ${SEALED_MARK_HEX.length / 2}) = decode(${SEALED_MARK_HEX}, 'hex')
               OR position(decode(${SECRET_MARK_HEX}, 'hex') in body) > 0)
        ORDER BY tenant_id, api_key_id, idempotency_key LIMIT ${REKEY_BATCH}
        FOR UPDATE`
      const changed: Array<{ readonly tenant_id: string; readonly api_key_id: string; readonly idempotency_key: string; readonly body: string }> = []
      for (const row of rows) {
        const sealed = sealedAnswerText(row.body)
        if (sealed !== undefined && isSealedWith(sealed, current)) {
          counts.unchanged++
          continue
        }
        const answer = openAnswer(secrets, row.body)
        if (answer === undefined) {
          counts.unreadable++
          continue
        }
        counts.rekeyed++
        changed.push({
          tenant_id: String(row.tenant_id),
          api_key_id: String(row.api_key_id),
          idempotency_key: row.idempotency_key,
          body: Buffer.from(sealAnswer(secrets, answer)).toString("base64")
        })
      }
      if (changed.length > 0) {
        yield* sql`
          UPDATE idempotency_keys k SET body = decode(v.body, 'base64')
          FROM jsonb_to_recordset(${JSON.stringify(changed)}::jsonb) AS v(tenant_id bigint, api_key_id bigint, idempotency_key text, body text)
          WHERE k.tenant_id = v.tenant_id AND k.api_key_id = v.api_key_id AND k.idempotency_key = v.idempotency_key`
      }
      return rows
    }))
    if (page.length < REKEY_BATCH) break
    after = page.at(-1)
  }
  return counts satisfies KeptAnswersRekeyed
})
