/**
 * Kept answers that carry a webhook secret (POST /hooks, rotate-secret; ruling 28) are sealed at
 * rest like the secret itself (CHAMBER_SECRET_KEY, docs/webhooks.md "Secrets"): stored as a
 * marker, which no JSON answer starts with, then the sealed text of the whole answer. The HTTP
 * API seals and opens them; `chamber secrets rekey` re-encrypts them.
 */
import type { WebhookSecrets } from "../shared/Ports.ts"

/** What a sealed answer's stored bytes start with (the NUL byte, then `sealed:`). */
export const SEALED_ANSWER_MARK = "\u0000sealed:"

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const SECRET_MARK = encoder.encode("whsec_")
const SEALED_MARK = encoder.encode(SEALED_ANSWER_MARK)

const startsWithAt = (bytes: Uint8Array, mark: Uint8Array, at: number) => {
  for (let j = 0; j < mark.length; j++) if (bytes[at + j] !== mark[j]) return false
  return true
}

/** Whether the answer's bytes hold a webhook secret. */
export const holdsWebhookSecret = (body: Uint8Array): boolean => {
  for (let at = body.indexOf(SECRET_MARK[0]!); at !== -1 && at + SECRET_MARK.length <= body.length; at = body.indexOf(SECRET_MARK[0]!, at + 1)) {
    if (startsWithAt(body, SECRET_MARK, at)) return true
  }
  return false
}

/** The sealed text of a stored answer, or undefined when it is stored as it was answered. */
export const sealedAnswerText = (stored: Uint8Array): string | undefined =>
  stored.length >= SEALED_MARK.length && startsWithAt(stored, SEALED_MARK, 0) ? decoder.decode(stored.subarray(SEALED_MARK.length)) : undefined

/** The bytes to keep for an answer: sealed when it holds a webhook secret, else as they are. */
export const sealAnswer = (secrets: WebhookSecrets["Service"], body: Uint8Array): Uint8Array =>
  holdsWebhookSecret(body) ? encoder.encode(SEALED_ANSWER_MARK + secrets.seal(decoder.decode(body))) : body

/** A stored answer's bytes as first answered, or undefined when these keys cannot open them. */
export const openAnswer = (secrets: WebhookSecrets["Service"], stored: Uint8Array): Uint8Array | undefined => {
  const sealed = sealedAnswerText(stored)
  if (sealed === undefined) return stored
  const opened = secrets.open(sealed)
  return opened._tag === "Success" ? encoder.encode(opened.success) : undefined
}
