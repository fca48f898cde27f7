/**
 * Signing a delivery: `X-CC-Signature` is the lower-case hex
 * HMAC-SHA256 of the exact raw body, keyed with the whole secret string's UTF-8 bytes.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import type { OutboxEvent } from "@chamber/core"

export const sign = (secret: string, rawBody: string): string => createHmac("sha256", secret).update(rawBody, "utf8").digest("hex")

/** What a receiver does: recompute and compare in constant time. */
export const verify = (secret: string, rawBody: string, signature: string): boolean => {
  const expected = Buffer.from(sign(secret, rawBody), "hex")
  const given = Buffer.from(signature, "hex")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** The delivery body, `data` being the resource as GET returns it, serialized once: the bytes that are signed are the bytes sent. */
export const deliveryBody = (event: OutboxEvent): string =>
  JSON.stringify({ id: event.id, type: event.type, created_at: event.created_at, data: event.data })

/** Headers of one delivery attempt. */
export const deliveryHeaders = (event: OutboxEvent, secret: string, rawBody: string): Record<string, string> => ({
  "content-type": "application/json",
  "user-agent": "Chamber-Webhooks/1",
  "x-cc-event": event.type,
  "x-cc-delivery": event.id,
  "x-cc-signature": sign(secret, rawBody)
})
