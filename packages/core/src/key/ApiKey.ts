/** API keys (docs/api.md "Authentication and scopes"): `cck_` + 40 base62; only a SHA-256 hash and the display prefix are kept. */
import { randomBase62 } from "../shared/Ids.ts"
import type { Scope } from "../Scopes.ts"

export const KEY_PREFIX = "cck_"
export const KEY_BODY_LENGTH = 40
export const DEFAULT_DAILY_LIMIT = 25_000
/** The largest ceiling the `integer` column holds. */
export const MAX_DAILY_LIMIT = 2_147_483_647
const KEY_SHAPE = /^cck_[0-9A-Za-z]{40}$/

export interface ApiKey {
  readonly id: number
  readonly tenant_id: number
  readonly name: string
  /** `cck_` + the first 8 characters: enough to recognise, useless to authenticate. */
  readonly prefix: string
  readonly scopes: ReadonlyArray<Scope>
  readonly daily_limit: number
  readonly created_by: number | null
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

/** What a valid key stands for on a request. */
export interface KeyContext {
  readonly keyId: number
  readonly tenantId: number
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<Scope>
  readonly dailyLimit: number
  readonly chamber: { readonly id: string; readonly name: string; readonly website: string | null }
}

export const generateKey = (): string => KEY_PREFIX + randomBase62(KEY_BODY_LENGTH)

export const displayPrefix = (plaintext: string): string => plaintext.slice(0, KEY_PREFIX.length + 8)

export const looksLikeKey = (candidate: string): boolean => KEY_SHAPE.test(candidate)
