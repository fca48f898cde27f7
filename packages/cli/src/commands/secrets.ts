/**
 * `chamber secrets rekey` (docs/webhooks.md "Rotating CHAMBER_SECRET_KEY"): every value sealed
 * at rest (the webhook secrets, a rotation's previous ones, the kept Idempotency-Key answers that
 * hold one) re-encrypted with CHAMBER_SECRET_KEY, opened with it or CHAMBER_SECRET_KEY_PREVIOUS;
 * it says how many of each.
 */
import { rekeyStoredSecrets, type SecretsRekeyed } from "@chamber/pg-adapter"
import { run } from "../Run.ts"

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

const lines = (r: SecretsRekeyed) => [
  `Re-encrypted ${count(r.rekeyed, "webhook secret", "webhook secrets")} with CHAMBER_SECRET_KEY; ${r.unchanged} already were.`,
  `Re-encrypted ${count(r.previous_secrets.rekeyed, "previous secret", "previous secrets")} of rotated subscriptions; ` +
  `${r.previous_secrets.unchanged} already were; dropped ${r.previous_secrets.dropped} no longer signing.`,
  `Re-encrypted ${count(r.kept_answers.rekeyed, "kept Idempotency-Key answer", "kept Idempotency-Key answers")} holding a webhook secret; ` +
  `${r.kept_answers.unchanged} already were.`,
  ...(r.kept_answers.unreadable === 0 ? [] : [
    `Left ${count(r.kept_answers.unreadable, "kept answer", "kept answers")} that neither key decrypts ` +
    "(a retry with its Idempotency-Key answers 503 until the retention prunes it)."
  ]),
  ...(r.damaged.length === 0 ? [] : [
    `Damaged, marked so: subscription${r.damaged.length === 1 ? "" : "s"} ${r.damaged.join(", ")} ` +
    "(the key that encrypted them does not decrypt them; delete them, and their owners can subscribe again for a new secret)."
  ])
]

export const secretsRekey = (opts: { readonly json?: boolean }) =>
  run(opts, rekeyStoredSecrets, { json: (r) => r, human: (r) => lines(r).join("\n") })
