/**
 * The HookPinger port over the relay's own sending (docs/webhooks.md "Ping"; ruling 31): the ping
 * is signed like a delivery (Signature.ts) and sent like one (Sender.ts), with the configured
 * timeout and destination guard, at once and only once.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AllowPrivateDestinations, HookPinger, HookPings } from "@chamber/core"
import { type ExtraCa, sendEffect } from "./Sender.ts"
import type { DeliverySettings } from "./Settings.ts"
import { deliveryBody, deliveryHeaders } from "./Signature.ts"

export const HookPingerLive = (settings: Pick<DeliverySettings, "timeoutMs" | "allowPrivate">, ca?: ExtraCa) =>
  Layer.succeed(HookPinger)({
    send: (url, secret, previous, event) =>
      Effect.suspend(() => {
        const body = deliveryBody(event)
        return sendEffect({
          url,
          headers: deliveryHeaders(event, secret, body, new Date(), previous),
          body,
          timeoutMs: settings.timeoutMs,
          allowPrivate: settings.allowPrivate,
          ca
        })
      }).pipe(Effect.map((r) => ({ ok: r.ok, status_code: r.status, latency_ms: r.latencyMs, error: r.error })))
  })

/**
 * The core's HookPings over this pinger, and AllowPrivateDestinations as the settings say
 * (CHAMBER_WEBHOOK_ALLOW_PRIVATE): what a server adds to the storage for the hooks endpoints.
 */
export const HookPingsLive = (settings: Pick<DeliverySettings, "timeoutMs" | "allowPrivate">, ca?: ExtraCa) =>
  Layer.merge(HookPings.layer.pipe(Layer.provide(HookPingerLive(settings, ca))), Layer.succeed(AllowPrivateDestinations)(settings.allowPrivate))
