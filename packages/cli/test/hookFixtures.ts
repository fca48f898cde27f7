/**
 * What the webhook suites of the `chamber` command start from: a real HTTPS receiver its relay
 * trusts (through NODE_EXTRA_CA_CERTS, with CHAMBER_WEBHOOK_ALLOW_PRIVATE for 127.0.0.1), and a
 * chamber with a key of the scopes a test needs.
 */
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { startReceiver } from "@chamber/webhook-relay/test/receiver"
import { chamber, json } from "./harness.ts"
import { tempDir } from "./tempDirs.ts"

export const receiverWithTrust = Effect.gen(function*() {
  const receiver = yield* Effect.acquireRelease(Effect.promise(() => startReceiver()), (r) => Effect.promise(() => r.close()))
  const ca = join(yield* tempDir("ca"), "receiver.pem")
  writeFileSync(ca, receiver.ca)
  return { receiver, env: { NODE_EXTRA_CA_CERTS: ca, CHAMBER_WEBHOOK_ALLOW_PRIVATE: "true" } }
})

/** A new chamber, its chamber_admin, and a key with `scopes` (comma-separated, or `all`). */
export const chamberWithKey = (scopes: string) =>
  Effect.gen(function*() {
    const tenant = json(yield* chamber(["tenant", "create", "--name", `Hooked ${Math.random()}`, "--json"]))
    json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "ops@hooked.example", "--role", "chamber_admin", "--json"]))
    const key = json(yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "ops@hooked.example", "--name", "zap", "--scopes", scopes, "--json"])).key as string
    return { tenant: tenant.id as string, key }
  })
