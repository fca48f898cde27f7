/**
 * The feed's cursor: opaque to clients (base64url of a versioned position), so its form may
 * change. A position is the chamber's own (one more per event of that chamber), so a cursor says
 * nothing of other chambers. `v2.` is given out; `v1.`, given while positions were shared by
 * every chamber, names the same place (a chamber's positions continued from its highest), so it
 * is still read. Anything that is not exactly the encoding of a position is malformed.
 */
import { Base64Url } from "effect/encoding"
import * as Result from "effect/Result"

const MAX_POSITION = 2n ** 63n - 1n

const encode = (version: string, position: bigint) => Base64Url.encode(`${version}.${position}`)

export const encodeCursor = (position: bigint): string => encode("v2", position)

/**
 * The form of every cursor the decoder reads, as a regular expression: `head`, or the base64url
 * (no padding) of `v1.` or `v2.` (`djEu`, `djIu`) and 1 to 19 digits. Each three digits encode as
 * four characters drawn from the few that digits give; one or two left over as two or three.
 * It states the form only: a leading zero or a position past 2^63 - 1 is still refused.
 */
const DIGITS3 = "[MNO][DTjz][AEIMQUYcgk][w-z0-5]"
const DIGITS1 = "[MNO][AQgw]"
const DIGITS2 = "[MNO][DTjz][AEIMQUYcgk]"
export const CURSOR_PATTERN =
  `^(?:head|dj[EI]u(?:(?:${DIGITS3}){0,5}(?:${DIGITS3}|${DIGITS1}|${DIGITS2})|(?:${DIGITS3}){6}${DIGITS1}))$`

export const decodeCursor = (cursor: string): bigint | undefined => {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return undefined
  const text = Base64Url.decodeString(cursor)
  if (Result.isFailure(text)) return undefined
  const match = /^(v[12])\.(0|[1-9][0-9]{0,18})$/.exec(text.success)
  if (match === null) return undefined
  const position = BigInt(match[2]!)
  return position <= MAX_POSITION && encode(match[1]!, position) === cursor ? position : undefined
}
