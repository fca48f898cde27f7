/**
 * `chamber secrets rekey` (docs/webhooks.md "Rotating CHAMBER_SECRET_KEY"): every stored webhook
 * secret re-encrypted with CHAMBER_SECRET_KEY, opened with it or CHAMBER_SECRET_KEY_PREVIOUS.
 */
import { rekeyStoredSecrets } from "@chamber/pg-adapter"
import { run } from "../Run.ts"

const secrets = (n: number) => `${n} webhook secret${n === 1 ? "" : "s"}`

export const secretsRekey = (opts: { readonly json?: boolean }) =>
  run(opts, rekeyStoredSecrets, {
    json: (r) => r,
    human: (r) =>
      [
        `Re-encrypted ${secrets(r.rekeyed)} with CHAMBER_SECRET_KEY; ${r.unchanged} already were.`,
        ...(r.damaged.length === 0 ? [] : [
          `Damaged, marked so: subscription${r.damaged.length === 1 ? "" : "s"} ${r.damaged.join(", ")} ` +
          "(the key that encrypted them does not decrypt them; delete them, and their owners can subscribe again for a new secret)."
        ])
      ].join("\n")
  })
