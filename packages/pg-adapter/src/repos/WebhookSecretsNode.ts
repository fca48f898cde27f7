/**
 * Webhook secrets with Node's crypto (ruling 23, docs/webhooks.md "Secrets"): `whsec_` + 32
 * random bytes in base64. Stored sealed with AES-256-GCM under a key derived from
 * CHAMBER_SECRET_KEY when it is set (`v1:` + base64 of iv, tag and ciphertext), else as they are
 * (`plain:`); a secret stored in the clear is still read once a key is set.
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes } from "node:crypto"
import { WebhookSecrets } from "@chamber/core"

/** A sealed secret that cannot be opened: the key is missing or is not the one that sealed it. */
export class SecretKeyMismatch extends Error {
  constructor() {
    super("A webhook secret is encrypted, but CHAMBER_SECRET_KEY is not set or is not the key that encrypted it.")
  }
}

export const webhookSecrets = (secretKey: string | undefined) => {
  // A KeyObject: each secret opened (every delivery a relay claims) then costs a few µs, not 15-20.
  const key = secretKey === undefined || secretKey === "" ? undefined : createSecretKey(createHash("sha256").update(secretKey, "utf8").digest())
  return WebhookSecrets.of({
    generate: () => `whsec_${randomBytes(32).toString("base64")}`,
    seal: (secret) => {
      if (key === undefined) return `plain:${secret}`
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()])
      return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`
    },
    open: (stored) => {
      if (stored.startsWith("plain:")) return stored.slice("plain:".length)
      if (key === undefined || !stored.startsWith("v1:")) throw new SecretKeyMismatch()
      const raw = Buffer.from(stored.slice(3), "base64")
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12))
      decipher.setAuthTag(raw.subarray(12, 28))
      try {
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
      } catch {
        throw new SecretKeyMismatch()
      }
    }
  })
}

/** From the environment's CHAMBER_SECRET_KEY. */
export const WebhookSecretsNode = Layer.effect(WebhookSecrets, Effect.gen(function*() {
  const key = yield* Config.option(Config.Redacted("CHAMBER_SECRET_KEY"))
  return webhookSecrets(Option.getOrUndefined(Option.map(key, Redacted.value)))
}))
