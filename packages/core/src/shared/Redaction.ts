/**
 * What no log line, span, span event, exception message or metric label carries
 * (docs/operations.md "What telemetry never carries"): one rule, applied by the access log, the
 * log writer, the span exporter and the request metrics alike.
 *
 * - An API key (`cck_` and 40 base62 characters) or a webhook secret (`whsec_` and base64),
 *   each character as sent or percent-encoded, wherever it appears: a client may put one
 *   anywhere (`?bearer=`, `?name=`, a path segment, a `types` value echoed in an error).
 * - The value of a query parameter whose name looks secret (one holding `key`, `token`,
 *   `secret`, `password`, `passwd`, `auth`, `signature`, `session` or `credential`, or `sig`:
 *   OpenTelemetry's list for `url.full` among them), percent-encoded names included: a
 *   parameter starts the text or follows `?` or `&`, and its value runs to the next `&`, `#`,
 *   quote, backslash or white space.
 *
 * Each is replaced by `[redacted]`.
 */
export const REDACTED = "[redacted]"

const SECRET_NAME = /key|token|secret|password|passwd|auth|signature|session|credential|^sig$/i
const SECRET_VALUE = /cck_(?:[A-Za-z0-9]|%[0-9A-Fa-f]{2}){40}|whsec_(?:[A-Za-z0-9+/=]|%[0-9A-Fa-f]{2})+/g
const PARAMETER = /(^|[?&])([^=&?#\s"'\\<>]*)=([^&#\s"'\\<>]*)/g

const isSecretName = (name: string) => {
  if (SECRET_NAME.test(name)) return true
  if (!name.includes("%")) return false
  try {
    return SECRET_NAME.test(decodeURIComponent(name))
  } catch {
    // a name that is not valid percent-encoding is judged as sent
    return false
  }
}

/** `text` with every secret the rule above names replaced by `[redacted]`; the same text when it holds none. */
export const redactSecrets = (text: string): string => {
  let out = text
  const eq = out.indexOf("=")
  // Most text holds no parameter that could be one: the pattern runs only where one may start.
  if (eq !== -1 && (out.includes("?") || out.includes("&") || isSecretName(out.slice(0, eq)))) {
    out = out.replace(PARAMETER, (whole, lead: string, name: string) => isSecretName(name) ? `${lead}${name}=${REDACTED}` : whole)
  }
  if (out.includes("cck_") || out.includes("whsec_")) out = out.replace(SECRET_VALUE, REDACTED)
  return out
}
