/**
 * Durations the environment takes (docs/cli.md "Configuration"): `500ms`, `30s`, `2m`, `1h`, `1d`,
 * in the one grammar every duration variable uses (the relay's, webhook-relay Schedule.ts).
 */
import * as Duration from "effect/Duration"
import { parseDuration as parseMillis } from "@chamber/webhook-relay"

/** The duration `text` names, or undefined when it names none; here a space may part number and unit (`30 s`). */
export const parseDuration = (text: string): Duration.Duration | undefined => {
  const ms = parseMillis(text.replace(/(\d)\s+(?=[a-z])/i, "$1"))
  return ms === undefined ? undefined : Duration.millis(ms)
}

/** A number of seconds as the largest units that say it (`0s`, `45s`, `3m 20s`, `2h 5m`, `3d 4h`): how long something has waited. */
export const waited = (seconds: number): string => {
  const s = Math.floor(seconds)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`
}
