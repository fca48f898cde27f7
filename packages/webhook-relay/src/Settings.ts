/**
 * The relay's delivery settings from the environment (docs/webhooks.md "Configuration"):
 * CHAMBER_WEBHOOK_RETRY_DELAYS, CHAMBER_WEBHOOK_TIMEOUT and CHAMBER_WEBHOOK_ALLOW_PRIVATE.
 * NODE_EXTRA_CA_CERTS needs nothing here: Node reads it itself.
 */
import { parseAllowPrivate } from "./Destination.ts"
import { parseRetryDelays, parseTimeout } from "./Schedule.ts"

export interface DeliverySettings {
  /** Before retries 1 to 3, in milliseconds, before jitter. */
  readonly retryDelaysMs: ReadonlyArray<number>
  /** Per attempt, connect and response together, in milliseconds. */
  readonly timeoutMs: number
  /** Loopback and private destinations allowed (development and tests only). */
  readonly allowPrivate: boolean
}

/** Reads the three variables, their defaults for unset or empty ones; throws an error naming the variable for a bad value. */
export const deliverySettingsFromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): DeliverySettings => ({
  retryDelaysMs: parseRetryDelays(env.CHAMBER_WEBHOOK_RETRY_DELAYS),
  timeoutMs: parseTimeout(env.CHAMBER_WEBHOOK_TIMEOUT),
  allowPrivate: parseAllowPrivate(env.CHAMBER_WEBHOOK_ALLOW_PRIVATE)
})
