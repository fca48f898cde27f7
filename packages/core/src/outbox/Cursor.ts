/**
 * The feed's cursor: opaque to clients (base64url of a versioned position), so its form may
 * change. Anything that is not exactly the encoding of a position is malformed.
 */
import { Base64Url } from "effect/encoding"
import * as Result from "effect/Result"

const MAX_POSITION = 2n ** 63n - 1n

export const encodeCursor = (position: bigint): string => Base64Url.encode(`v1.${position}`)

export const decodeCursor = (cursor: string): bigint | undefined => {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return undefined
  const text = Base64Url.decodeString(cursor)
  if (Result.isFailure(text)) return undefined
  const match = /^v1\.(0|[1-9][0-9]{0,18})$/.exec(text.success)
  if (match === null) return undefined
  const position = BigInt(match[1]!)
  return position <= MAX_POSITION && encodeCursor(position) === cursor ? position : undefined
}
