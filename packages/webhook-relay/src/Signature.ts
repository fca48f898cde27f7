/**
 * Signing a delivery (docs/webhooks.md "Body and headers" and "Verifying a delivery"; rulings
 * 20 and 23).
 *
 * Every delivery carries two signatures over the same raw body bytes:
 * - `X-CC-Signature`: the lower-case hex HMAC-SHA256 of the raw body, keyed with the whole
 *   secret string's UTF-8 bytes (`whsec_` included), so a receiver needs no decoding;
 * - `webhook-signature` (Standard Webhooks v1): `v1,<base64 HMAC-SHA256 of
 *   "{webhook-id}.{webhook-timestamp}.{raw body}">`, keyed with the base64-decoded bytes after
 *   `whsec_`, as any Standard Webhooks library expects.
 *
 * During a secret rotation's overlap (ruling 31) the previous secret signs too: `webhook-signature`
 * carries both `v1,` signatures, the new one first, space separated; `X-CC-Signature` stays the
 * new one and `X-CC-Signature-Previous` carries the old.
 */
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from "node:crypto"

/** What a delivery carries: an outbox event, or a ping. */
export interface SignedEvent {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly data: unknown
}

/**
 * `X-CC-Signature`: lower-case hex HMAC-SHA256 of the raw body's UTF-8 bytes, keyed with the secret
 * string's UTF-8 bytes (a string key is taken as UTF-8; it is also much cheaper than a Buffer key,
 * which Node checks for a KeyObject by throwing).
 */
export const sign = (secret: string, rawBody: string): string => createHmac("sha256", secret).update(rawBody, "utf8").digest("hex")

/** What a receiver does with `X-CC-Signature`: recompute and compare in constant time. */
export const verify = (secret: string, rawBody: string, signature: string): boolean => {
  const expected = Buffer.from(sign(secret, rawBody), "hex")
  const given = Buffer.from(signature, "hex")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const SECRET_PREFIX = "whsec_"
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/**
 * The Standard Webhooks signing key: the standard base64 after `whsec_`, decoded. A secret
 * without the prefix is decoded as a whole, as the Standard Webhooks libraries do. Throws when
 * the secret is not standard base64 (relay secrets always are: ruling 23).
 */
export const standardWebhooksKey = (secret: string): Buffer => {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
  if (encoded === "" || !STANDARD_BASE64.test(encoded)) {
    throw new Error("A webhook secret must be whsec_ followed by standard base64 (the Standard Webhooks form).")
  }
  return Buffer.from(encoded, "base64")
}

/** Standard Webhooks keys by secret, each made once as a KeyObject, not again from its bytes for every signature. */
const standardKeys = new Map<string, KeyObject>()
const STANDARD_KEYS_KEPT = 10_000

const standardKey = (secret: string): KeyObject => {
  let key = standardKeys.get(secret)
  if (key === undefined) {
    if (standardKeys.size >= STANDARD_KEYS_KEPT) standardKeys.clear()
    key = createSecretKey(standardWebhooksKey(secret))
    standardKeys.set(secret, key)
  }
  return key
}

/** Unix seconds of `time`: the `webhook-timestamp` of an attempt made then. */
export const unixSeconds = (time: Date): number => Math.floor(time.getTime() / 1000)

/**
 * `webhook-signature` (Standard Webhooks v1): `v1,` + base64 HMAC-SHA256 of
 * `"{id}.{timestamp}.{rawBody}"` (UTF-8), keyed with {@link standardWebhooksKey}.
 */
export const signStandard = (secret: string, id: string, timestamp: number, rawBody: string): string =>
  "v1," + createHmac("sha256", standardKey(secret)).update(`${id}.${timestamp}.${rawBody}`, "utf8").digest("base64")

/**
 * What a receiver does with the Standard Webhooks headers: recompute and compare in constant time
 * against each space-separated `v1,` signature of the header. The timestamp's age is the
 * receiver's policy and is not checked here.
 */
export const verifyStandard = (
  secret: string,
  id: string,
  timestamp: string,
  rawBody: string,
  signatureHeader: string
): boolean => {
  if (!/^\d+$/.test(timestamp)) return false
  const expected = Buffer.from(signStandard(secret, id, Number(timestamp), rawBody).slice(3), "base64")
  return signatureHeader.split(" ").some((candidate) => {
    if (!candidate.startsWith("v1,")) return false
    const given = Buffer.from(candidate.slice(3), "base64")
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}

/** The delivery body, `data` being the resource as GET returns it, serialized once: the bytes that are signed are the bytes sent. */
export const deliveryBody = (event: SignedEvent): string =>
  JSON.stringify({ id: event.id, type: event.type, created_at: event.created_at, data: event.data })

/** The headers of one delivery attempt, names in lower case (a type, not an interface, so that it is a Record<string, string>). */
export type DeliveryHeaders = {
  readonly "content-type": "application/json"
  readonly "user-agent": "Chamber-Webhooks/1"
  /** The event kind. */
  readonly "x-cc-event": string
  /** The event id, stable across retries. */
  readonly "x-cc-delivery": string
  readonly "x-cc-signature": string
  /** The event id, stable across retries. */
  readonly "webhook-id": string
  /** Unix seconds of this attempt. */
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
  /** The previous secret's `X-CC-Signature`, during a rotation's overlap only. */
  readonly "x-cc-signature-previous"?: string
}

/**
 * Headers of the delivery attempt made at `attemptTime`, both signatures over `rawBody`; with
 * `previous` (a rotation's overlap) its signatures beside the secret's.
 */
export const deliveryHeaders = (
  event: SignedEvent,
  secret: string,
  rawBody: string,
  attemptTime: Date,
  previous: string | null = null
): DeliveryHeaders => {
  const timestamp = unixSeconds(attemptTime)
  const standard = signStandard(secret, event.id, timestamp, rawBody)
  const headers: DeliveryHeaders = {
    "content-type": "application/json",
    "user-agent": "Chamber-Webhooks/1",
    "x-cc-event": event.type,
    "x-cc-delivery": event.id,
    "x-cc-signature": sign(secret, rawBody),
    "webhook-id": event.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": standard
  }
  if (previous === null) return headers
  return {
    ...headers,
    "webhook-signature": `${standard} ${signStandard(previous, event.id, timestamp, rawBody)}`,
    "x-cc-signature-previous": sign(previous, rawBody)
  }
}
