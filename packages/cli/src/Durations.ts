/** Durations the environment takes (docs/cli.md "Configuration"): `500ms`, `30s`, `2m`, `1h`. */
import { Duration } from "effect"

const units = { ms: Duration.millis, s: Duration.seconds, m: Duration.minutes, h: Duration.hours }

/** The duration `text` names, or undefined when it names none. */
export const parseDuration = (text: string): Duration.Duration | undefined => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/.exec(text)
  return match === null ? undefined : units[match[2] as keyof typeof units](Number(match[1]))
}
