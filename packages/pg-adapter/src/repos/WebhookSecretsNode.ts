/**
 * Webhook secrets with Node's crypto (ruling 23, docs/webhooks.md "Secrets"): `whsec_` + 32
 * random bytes in base64. Stored sealed with AES-256-GCM under a key derived from
 * CHAMBER_SECRET_KEY when it is set, else as they are (`plain:`). A sealed secret names the key
 * that sealed it (`v2:` + the key's id + `:` + base64 of iv, tag and ciphertext), so one sealed
 * with a key this process lacks is told apart from a damaged one; `v1:` (the form before key ids)
 * is still read. CHAMBER_SECRET_KEY_PREVIOUS opens (never seals) secrets during a key rotation.
 * A secret found damaged when the keys changed is kept as `damaged:` + its stored form: damaged
 * under any key, as its own key is gone.
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { createCipheriv, createDecipheriv, createHash, createHmac, createSecretKey, type KeyObject, randomBytes } from "node:crypto"
import { type SecretUnreadableReason, WebhookSecrets, WebhookSecretUnreadable } from "@chamber/core"

/** The keys a process seals and opens webhook secrets with; an empty one counts as unset. */
export interface SecretKeys {
  /** CHAMBER_SECRET_KEY: seals new secrets, opens. */
  readonly current?: string | undefined
  /** CHAMBER_SECRET_KEY_PREVIOUS: opens only (a rotation's old key). */
  readonly previous?: string | undefined
}

interface Key {
  readonly id: string
  readonly object: KeyObject
}

const keyOf = (text: string | undefined): Key | undefined => {
  if (text === undefined || text === "") return undefined
  const bytes = createHash("sha256").update(text, "utf8").digest()
  // 8 hex characters of an HMAC under the key: names it, and tells nothing of it.
  return { id: createHmac("sha256", bytes).update("chamber webhook secret key id").digest("hex").slice(0, 8), object: createSecretKey(bytes) }
}

/** The key id `text` seals with, as written in its sealed secrets. */
export const secretKeyId = (text: string): string | undefined => keyOf(text)?.id

/** Whether `stored` is sealed with the key `text` (so re-encrypting it under that key changes nothing). */
export const isSealedWith = (stored: string, text: string): boolean => {
  const id = secretKeyId(text)
  return id !== undefined && stored.startsWith(`v2:${id}:`)
}

const decrypt = (key: KeyObject, base64: string): string | undefined => {
  const raw = Buffer.from(base64, "base64")
  if (raw.length < 28) return undefined
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12))
    decipher.setAuthTag(raw.subarray(12, 28))
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
  } catch {
    return undefined
  }
}

/** The prefix of a secret that rekey found damaged. */
export const DAMAGED = "damaged:"

const unreadable = (reason: SecretUnreadableReason) => Result.fail(new WebhookSecretUnreadable({ reason }))

/** Seals with `keys.current` (or `current`, a key's text), opens with it or `keys.previous`. */
export const webhookSecrets = (keys: SecretKeys | string | undefined) => {
  const { current: currentText, previous: previousText } = typeof keys === "object" ? keys : { current: keys, previous: undefined }
  // The keys are made once, as KeyObjects, not again from their text for each secret opened
  // (every delivery a relay claims).
  const current = keyOf(currentText)
  const previous = keyOf(previousText)
  const known = [current, previous].filter((k) => k !== undefined)
  return WebhookSecrets.of({
    generate: () => `whsec_${randomBytes(32).toString("base64")}`,
    seal: (secret) => {
      if (current === undefined) return `plain:${secret}`
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", current.object, iv)
      const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()])
      return `v2:${current.id}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`
    },
    open: (stored) => {
      if (stored.startsWith("plain:")) return Result.succeed(stored.slice("plain:".length))
      if (stored.startsWith(DAMAGED)) return unreadable("damaged")
      const v2 = /^v2:([0-9a-f]{8}):(.*)$/s.exec(stored)
      const v1 = stored.startsWith("v1:") ? stored.slice(3) : undefined
      if (v2 === null && v1 === undefined) return unreadable("damaged")
      if (known.length === 0) return unreadable("no-key")
      if (v2 !== null) {
        const key = known.find((k) => k.id === v2[1])
        if (key === undefined) return unreadable("other-key")
        const secret = decrypt(key.object, v2[2]!)
        return secret === undefined ? unreadable("damaged") : Result.succeed(secret)
      }
      for (const key of known) {
        const secret = decrypt(key.object, v1!)
        if (secret !== undefined) return Result.succeed(secret)
      }
      return unreadable("undecryptable")
    }
  })
}

/** CHAMBER_SECRET_KEY and CHAMBER_SECRET_KEY_PREVIOUS from the environment. */
export const secretKeysConfig: Config.Config<SecretKeys> = Config.all({
  current: Config.option(Config.Redacted("CHAMBER_SECRET_KEY")),
  previous: Config.option(Config.Redacted("CHAMBER_SECRET_KEY_PREVIOUS"))
}).pipe(Config.map(({ current, previous }) => ({
  current: Option.getOrUndefined(Option.map(current, Redacted.value)),
  previous: Option.getOrUndefined(Option.map(previous, Redacted.value))
})))

/** From the environment's CHAMBER_SECRET_KEY (and CHAMBER_SECRET_KEY_PREVIOUS). */
export const WebhookSecretsNode = Layer.effect(WebhookSecrets, Effect.map(secretKeysConfig, webhookSecrets))
