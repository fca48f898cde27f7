/**
 * What a subscription's URL must be when it is posted (docs/webhooks.md "Subscriptions"), each
 * rule with the message of its 422 on `url`: at most 500 characters, https, a host as written and
 * a port a receiver can listen on. Where a destination may not lead is checked again at each
 * delivery, on the address actually connected to (webhook-relay Destination.ts, ruling 24).
 */
import * as Schema from "effect/Schema"
import * as F from "../resource/Field.ts"

export const MAX_HOOK_URL = 500

const parsed = (text: string): URL | undefined => {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

/**
 * `https://`, then a host as written: URL parsing skips the slashes (and backslashes) of an empty
 * authority, so it reads `https:///nohost` as host "nohost", a URL nobody wrote.
 */
const httpsWithHost = (text: string) => /^https:\/\/[^/\\?#]/i.test(text) && parsed(text) !== undefined

/** Port 0 is no port a receiver listens on (a port past 65535 fails parsing already). */
const listenablePort = (text: string) => parsed(text)?.port !== "0"

export const HookUrl = F.ruledText(MAX_HOOK_URL, "https://hooks.example.com/chamber", [
  Schema.makeFilter(httpsWithHost, { message: "The {field} field must be a valid URL starting with https://." }),
  Schema.makeFilter(listenablePort, { message: "The {field} field must have a port from 1 to 65535." })
], {
  // What the document can say of `httpsWithHost`: the scheme in any case, then a host's first character.
  format: "uri",
  pattern: "^[hH][tT][tT][pP][sS]://[^/\\\\?#\\u0000][^\\u0000]*$"
}).schema
