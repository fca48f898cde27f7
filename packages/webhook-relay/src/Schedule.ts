/**
 * When a delivery is tried again (docs/webhooks.md "Retries"; ruling 21, spec 6.2 and 8).
 *
 * A delivery gets one attempt and up to 3 retries. Retry n waits the n-th configured delay
 * (CHAMBER_WEBHOOK_RETRY_DELAYS, default `1m,30m,6h`) with +-20% jitter. When the failed attempt
 * was a 429 or 503 with `Retry-After`, the retry waits max(that jittered delay, Retry-After),
 * Retry-After counting for at most 24 h. An attempt is given CHAMBER_WEBHOOK_TIMEOUT (default
 * `10s`) for connect and response together.
 */

import { RETRIES_PER_DELIVERY } from "@chamber/core"

/** Spec 6.2 and 8: a delivery is retried up to 3 times. */
export { RETRIES_PER_DELIVERY }
/** The first attempt and its retries. */
export const ATTEMPTS_PER_DELIVERY = RETRIES_PER_DELIVERY + 1
export const DEFAULT_RETRY_DELAYS = "1m,30m,6h"
export const DEFAULT_TIMEOUT = "10s"
/** Each retry delay is moved by up to this fraction either way. */
export const JITTER = 0.2
/** The most a Retry-After can push a retry: 24 h, in milliseconds. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/

/** A duration such as `500ms`, `10s`, `1m`, `6h`, `1d` (a number and a unit), in milliseconds; undefined when `text` is not one. */
export const parseDuration = (text: string): number | undefined => {
  const match = DURATION.exec(text.trim())
  if (match === null) return undefined
  const ms = Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS])
  return Number.isSafeInteger(ms) ? ms : undefined
}

/** A configuration value that cannot be used; the message names the variable, the value and what is expected. */
export class DeliveryConfigError extends Error {
  override readonly name = "DeliveryConfigError"
}

/**
 * CHAMBER_WEBHOOK_RETRY_DELAYS: exactly the comma-separated delays given, in order, one per retry
 * (so exactly 3), in milliseconds. Undefined or empty means the default `1m,30m,6h`.
 */
export const parseRetryDelays = (text: string | undefined): ReadonlyArray<number> => {
  const value = text === undefined || text.trim() === "" ? DEFAULT_RETRY_DELAYS : text
  const fail = (why: string) =>
    new DeliveryConfigError(
      `CHAMBER_WEBHOOK_RETRY_DELAYS must be ${RETRIES_PER_DELIVERY} comma-separated durations, one per retry, ` +
        `each a number and a unit among ms, s, m, h, d (e.g. ${DEFAULT_RETRY_DELAYS}), not "${value}": ${why}.`
    )
  const items = value.split(",")
  const delays = items.map((item) => {
    const ms = parseDuration(item)
    if (ms === undefined) throw fail(`"${item.trim()}" is not a duration`)
    return ms
  })
  if (delays.length !== RETRIES_PER_DELIVERY) throw fail(`it lists ${delays.length}`)
  return delays
}

/** CHAMBER_WEBHOOK_TIMEOUT: one duration, more than 0, in milliseconds. Undefined or empty means the default `10s`. */
export const parseTimeout = (text: string | undefined): number => {
  const value = text === undefined || text.trim() === "" ? DEFAULT_TIMEOUT : text
  const ms = parseDuration(value)
  if (ms === undefined || ms <= 0) {
    throw new DeliveryConfigError(
      `CHAMBER_WEBHOOK_TIMEOUT must be a duration above 0, a number and a unit among ms, s, m, h, d (e.g. ${DEFAULT_TIMEOUT}), not "${value}".`
    )
  }
  return ms
}

const DEFAULT_DELAYS_MS = parseRetryDelays(undefined)

export interface NextAttemptOptions {
  /** A number in [0, 1), as Math.random (the default) gives: where the jitter falls. */
  readonly random?: () => number
  /** The failed attempt's Retry-After in seconds, when it was a 429 or 503 carrying one (see {@link parseRetryAfter}). */
  readonly retryAfterSeconds?: number | null | undefined
  /** The configured delays ({@link parseRetryDelays}); the defaults when absent. */
  readonly delaysMs?: ReadonlyArray<number>
}

/**
 * Milliseconds to wait before retry `retryIndex` (0 is the first retry, after the first attempt
 * failed; 2 the last): the configured delay +-20%, pushed to the Retry-After when that is longer,
 * the Retry-After counting for at most 24 h. Throws a RangeError for an index with no retry:
 * after the last retry the delivery has failed.
 */
export const nextAttemptDelay = (retryIndex: number, options: NextAttemptOptions = {}): number => {
  const delays = options.delaysMs ?? DEFAULT_DELAYS_MS
  const delay = Number.isInteger(retryIndex) ? delays[retryIndex] : undefined
  if (delay === undefined) {
    throw new RangeError(`There is no retry ${retryIndex}: retries are numbered 0 to ${delays.length - 1}.`)
  }
  const r = Math.min(Math.max((options.random ?? Math.random)(), 0), 1)
  const jittered = Math.round(delay * (1 + JITTER * (2 * r - 1)))
  const retryAfter = options.retryAfterSeconds
  if (retryAfter === null || retryAfter === undefined || !Number.isFinite(retryAfter) || retryAfter <= 0) return jittered
  return Math.max(jittered, Math.min(Math.ceil(retryAfter * 1000), MAX_RETRY_AFTER_MS))
}

const DAYS = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
const LONG_DAYS = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const MONTH = `(${MONTHS.join("|")})`
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})"
/** RFC 9110 5.6.7: IMF-fixdate, then the obsolete RFC 850 and asctime forms a recipient must accept. */
const IMF_FIXDATE = new RegExp(`^${DAYS}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`)
const RFC_850 = new RegExp(`^${LONG_DAYS}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`)
const ASCTIME = new RegExp(`^${DAYS} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`)

/** Milliseconds since the epoch of an HTTP-date, or undefined when `text` is none (or names no real moment). */
export const parseHttpDate = (text: string, now: Date = new Date()): number | undefined => {
  let parts: [day: string, month: string, year: number, hh: string, mm: string, ss: string] | undefined
  let m = IMF_FIXDATE.exec(text)
  if (m !== null) parts = [m[1]!, m[2]!, Number(m[3]), m[4]!, m[5]!, m[6]!]
  else if ((m = RFC_850.exec(text)) !== null) {
    // A two-digit year more than 50 years ahead is in the past century (RFC 9110 5.6.7).
    const yy = Number(m[3])
    const century = Math.floor(now.getUTCFullYear() / 100) * 100
    const year = century + yy > now.getUTCFullYear() + 50 ? century - 100 + yy : century + yy
    parts = [m[1]!, m[2]!, year, m[4]!, m[5]!, m[6]!]
  } else if ((m = ASCTIME.exec(text)) !== null) parts = [m[2]!.trim(), m[1]!, Number(m[6]), m[3]!, m[4]!, m[5]!]
  if (parts === undefined) return undefined
  const [day, month, year, hh, mm, ss] = parts
  const monthIndex = MONTHS.indexOf(month)
  const [d, h, min, s] = [Number(day), Number(hh), Number(mm), Number(ss)]
  const time = Date.UTC(year, monthIndex, d, h, min, s)
  const check = new Date(time)
  // Date.UTC rolls 31 Feb over into March; such a date names no moment.
  if (check.getUTCDate() !== d || check.getUTCMonth() !== monthIndex || h > 23 || min > 59 || s > 60) return undefined
  return time
}

/**
 * A `Retry-After` header value in seconds from `now`: delay-seconds (digits only), or an HTTP-date
 * (a date already past gives 0). Anything else (empty, negative, fractional, garbage) gives
 * undefined, as if the header were absent. Not capped here: {@link nextAttemptDelay} caps it.
 */
export const parseRetryAfter = (value: string | ReadonlyArray<string> | undefined, now: Date = new Date()): number | undefined => {
  const text = (typeof value === "string" ? value : value?.[0])?.trim()
  if (text === undefined || text === "") return undefined
  if (/^\d+$/.test(text)) {
    const seconds = Number(text)
    return Number.isSafeInteger(seconds) ? seconds : Number.MAX_SAFE_INTEGER
  }
  const at = parseHttpDate(text, now)
  return at === undefined ? undefined : Math.max(0, Math.ceil((at - now.getTime()) / 1000))
}
