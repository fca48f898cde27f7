/** Storage port for API keys. Lookups are by hash only. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Scope } from "../Scopes.ts"
import type { ApiKey, KeyContext } from "./ApiKey.ts"

export class ApiKeyRepo extends Context.Service<ApiKeyRepo, {
  readonly insert: (key: {
    readonly tenant_id: number
    readonly name: string
    readonly prefix: string
    readonly key_hash: string
    readonly scopes: ReadonlyArray<Scope>
    readonly daily_limit: number
    readonly created_by: number | null
  }) => Effect.Effect<ApiKey>
  /** The live (not revoked) key with this hash, with its tenant. */
  readonly findActiveByHash: (hash: string) => Effect.Effect<KeyContext | undefined>
  readonly list: (tenantId: number) => Effect.Effect<ReadonlyArray<ApiKey>>
  /** Revokes every live key with this display prefix; returns the keys revoked. */
  readonly revokeByPrefix: (prefix: string) => Effect.Effect<ReadonlyArray<ApiKey>>
  readonly touch: (keyId: number) => Effect.Effect<void>
  /** The live keys with this display prefix. */
  readonly findLiveByPrefix: (prefix: string) => Effect.Effect<ReadonlyArray<ApiKey>>
  /** Sets the daily ceiling of every live key with this display prefix; returns them. */
  readonly setDailyLimit: (prefix: string, dailyLimit: number) => Effect.Effect<ReadonlyArray<ApiKey>>
}>()("chamber/ApiKeyRepo") {}
