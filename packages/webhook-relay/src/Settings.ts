/**
 * The relay's delivery settings from the environment (docs/webhooks.md "Configuration"):
 * CHAMBER_WEBHOOK_RETRY_DELAYS, CHAMBER_WEBHOOK_TIMEOUT, CHAMBER_WEBHOOK_ALLOW_PRIVATE,
 * CHAMBER_WEBHOOK_RETENTION, CHAMBER_WEBHOOK_LEASE and CHAMBER_WEBHOOK_CHAMBER_SHARE.
 * NODE_EXTRA_CA_CERTS needs nothing here: Node reads it itself.
 */
import { parseAllowPrivate } from "./Destination.ts"
import { DeliveryConfigError, parseDuration, parseRetryDelays, parseTimeout } from "./Schedule.ts"

export interface DeliverySettings {
  /** Before retries 1 to 3, in milliseconds, before jitter. */
  readonly retryDelaysMs: ReadonlyArray<number>
  /** Per attempt, connect and response together, in milliseconds. */
  readonly timeoutMs: number
  /** Loopback and private destinations allowed (development and tests only). */
  readonly allowPrivate: boolean
  /** Settled deliveries (and their attempts) older than this are pruned, CHAMBER_WEBHOOK_RETENTION. */
  readonly retentionMs: number
  /**
   * How long a claim holds a delivery unless the relay renews it, CHAMBER_WEBHOOK_LEASE (default
   * DEFAULT_LEASE_MS): at most this long after a relay dies, others take its deliveries.
   */
  readonly leaseMs?: number | undefined
  /**
   * The share of a relay's sends in flight one chamber may hold, CHAMBER_WEBHOOK_CHAMBER_SHARE
   * (default DEFAULT_CHAMBER_SHARE): a chamber whose receivers never answer holds at most this.
   */
  readonly chamberShare?: number | undefined
}

/** CHAMBER_WEBHOOK_CHAMBER_SHARE's default: a quarter of a relay's sends (32 of 128). */
export const DEFAULT_CHAMBER_SHARE = 0.25

/** CHAMBER_WEBHOOK_CHAMBER_SHARE: a percentage above 0 and at most 100, such as 25%. */
export const parseChamberShare = (text: string | undefined): number | undefined => {
  if (text === undefined || text.trim() === "") return undefined
  const match = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(text)
  const percent = match === null ? NaN : Number(match[1])
  if (!(percent > 0 && percent <= 100)) {
    throw new DeliveryConfigError(`CHAMBER_WEBHOOK_CHAMBER_SHARE must be a percentage above 0 and at most 100, such as 25%, not "${text}".`)
  }
  return percent / 100
}

/** A chamber's sends in flight at most, of a relay's `concurrency`: its share, at least one. */
export const perChamberOf = (concurrency: number, share: number = DEFAULT_CHAMBER_SHARE): number =>
  Math.max(1, Math.floor(concurrency * share))

/** CHAMBER_WEBHOOK_LEASE's default: a dead relay's deliveries go out again within about 11 s. */
export const DEFAULT_LEASE_MS = 10_000
/** The shortest lease: renewed every quarter of it, a renewal must have time to reach the database. */
export const MIN_LEASE_MS = 1_000

/** CHAMBER_WEBHOOK_LEASE: a duration of at least a second. */
export const parseLease = (text: string | undefined): number | undefined => {
  if (text === undefined || text.trim() === "") return undefined
  const ms = parseDuration(text)
  if (ms === undefined || ms < MIN_LEASE_MS) {
    throw new DeliveryConfigError(`CHAMBER_WEBHOOK_LEASE must be a duration of at least 1s, such as 10s, not "${text}".`)
  }
  return ms
}

/** CHAMBER_WEBHOOK_RETENTION: default 30 days. */
export const parseRetention = (text: string | undefined): number => {
  if (text === undefined || text.trim() === "") return 30 * 86_400_000
  const ms = parseDuration(text)
  if (ms === undefined || ms <= 0) {
    throw new DeliveryConfigError(`CHAMBER_WEBHOOK_RETENTION must be a duration such as 30d, 12h or 90m, not "${text}".`)
  }
  return ms
}

/** Reads the variables, their defaults for unset or empty ones; throws an error naming the variable for a bad value. */
export const deliverySettingsFromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): DeliverySettings => {
  const leaseMs = parseLease(env.CHAMBER_WEBHOOK_LEASE)
  const chamberShare = parseChamberShare(env.CHAMBER_WEBHOOK_CHAMBER_SHARE)
  return {
    retryDelaysMs: parseRetryDelays(env.CHAMBER_WEBHOOK_RETRY_DELAYS),
    timeoutMs: parseTimeout(env.CHAMBER_WEBHOOK_TIMEOUT),
    allowPrivate: parseAllowPrivate(env.CHAMBER_WEBHOOK_ALLOW_PRIVATE),
    retentionMs: parseRetention(env.CHAMBER_WEBHOOK_RETENTION),
    ...(leaseMs === undefined ? {} : { leaseMs }),
    ...(chamberShare === undefined ? {} : { chamberShare })
  }
}
