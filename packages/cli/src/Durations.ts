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
