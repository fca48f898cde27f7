/** Minting, authenticating, listing and revoking API keys. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../shared/Errors.ts"
import { TenantNotFound } from "../tenant/TenantErrors.ts"
import { KeyHasher } from "../shared/Ports.ts"
import { parseScopeList, unknownScopesMessage } from "../Scopes.ts"
import { TenantRepo } from "../tenant/TenantRepo.ts"
import { Tenants } from "../tenant/Tenants.ts"
import { type ClaimTimes, IdempotencyRepo, type KeyClaim } from "../idempotency/IdempotencyRepo.ts"
import { ApiKeyRepo } from "./ApiKeyRepo.ts"
import { type ApiKey, DEFAULT_DAILY_LIMIT, MAX_DAILY_LIMIT, displayPrefix, generateKey, type KeyContext, looksLikeKey } from "./ApiKey.ts"

/** Only a chamber_admin of the tenant may mint (docs/api.md "Authentication and scopes"). */
export class NotChamberAdmin extends Schema.TaggedError<NotChamberAdmin>()("NotChamberAdmin", {
  email: Schema.String,
  tenant: Schema.String
}) {
  readonly kind = "Denied" as const
  override get message() {
    return `${this.email} is not a chamber_admin of ${this.tenant}: only a chamber_admin may mint keys.`
  }
}

/** No live key has this display prefix. */
export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", { prefix: Schema.String }) {
  readonly kind = "NotFound" as const
  override get message() {
    return `No live key with the prefix ${this.prefix}.`
  }
}

const checkDailyLimit = (dailyLimit: number) =>
  Number.isInteger(dailyLimit) && dailyLimit >= 1 && dailyLimit <= MAX_DAILY_LIMIT
    ? Effect.succeed(dailyLimit)
    : InvalidInput.field("daily_limit", `The daily limit must be a whole number from 1 to ${MAX_DAILY_LIMIT}.`)

export interface MintRequest {
  readonly tenant: string | number
  readonly asEmail: string
  readonly name: string
  /** Comma-separated scopes, `read` or `all`. */
  readonly scopes: string
  readonly dailyLimit?: number | undefined
}

export interface MintedKey extends ApiKey {
  /** The plaintext, shown once. */
  readonly key: string
}

export class Keys extends Context.Service<Keys, {
  readonly mint: (request: MintRequest) => Effect.Effect<MintedKey, TenantNotFound | NotChamberAdmin | InvalidInput>
  readonly authenticate: (plaintext: string) => Effect.Effect<KeyContext | undefined>
  /**
   * `authenticate`, and under the key found the Idempotency-Key `value` claimed for `owner`, in
   * one statement committed at once (ruling 28; `IdempotencyRepo.claimWithKey`).
   */
  readonly authenticateClaiming: (plaintext: string, value: string, owner: string, times: ClaimTimes) => Effect.Effect<KeyClaim | undefined>
  readonly list: (tenant: string | number) => Effect.Effect<ReadonlyArray<ApiKey>, TenantNotFound>
  readonly revoke: (prefix: string) => Effect.Effect<ReadonlyArray<ApiKey>, KeyNotFound>
  /** The live keys with this display prefix (usually one). */
  readonly live: (prefix: string) => Effect.Effect<ReadonlyArray<ApiKey>, KeyNotFound>
  /** A new daily ceiling for the live keys with this prefix, from their next request on. */
  readonly setDailyLimit: (prefix: string, dailyLimit: number) => Effect.Effect<ReadonlyArray<ApiKey>, KeyNotFound | InvalidInput>
}>()("chamber/Keys") {
  static readonly layer = Layer.effect(Keys, Effect.gen(function*() {
    const repo = yield* ApiKeyRepo
    const tenantRepo = yield* TenantRepo
    const tenants = yield* Tenants
    const hasher = yield* KeyHasher
    const idempotency = yield* IdempotencyRepo

    const mint = Effect.fn("Keys.mint")(function*(request: MintRequest) {
      const tenant = yield* tenants.get(request.tenant)
      const user = yield* tenantRepo.findUser(tenant.id, request.asEmail.toLowerCase())
      if (user === undefined || user.role !== "chamber_admin") {
        return yield* new NotChamberAdmin({ email: request.asEmail, tenant: tenant.public_id })
      }
      const name = request.name.trim()
      if (name === "" || name.length > 255) {
        return yield* InvalidInput.field("name", "The key name is required (at most 255 characters).")
      }
      const parsed = parseScopeList(request.scopes)
      if (!parsed.ok) {
        return yield* InvalidInput.field("scopes", unknownScopesMessage(parsed.unknown))
      }
      const dailyLimit = yield* checkDailyLimit(request.dailyLimit ?? DEFAULT_DAILY_LIMIT)
      const plaintext = generateKey()
      const stored = yield* repo.insert({
        tenant_id: tenant.id,
        name,
        prefix: displayPrefix(plaintext),
        key_hash: hasher.hash(plaintext),
        scopes: parsed.scopes,
        daily_limit: dailyLimit,
        created_by: user.id
      })
      return { ...stored, key: plaintext }
    })
    const authenticate = Effect.fn("Keys.authenticate")(function*(plaintext: string) {
      if (!looksLikeKey(plaintext)) return undefined
      return yield* repo.findActiveByHash(hasher.hash(plaintext))
    })
    const authenticateClaiming = Effect.fn("Keys.authenticateClaiming")(function*(plaintext: string, value: string, owner: string, times: ClaimTimes) {
      if (!looksLikeKey(plaintext)) return undefined
      return yield* idempotency.claimWithKey(hasher.hash(plaintext), value, owner, times)
    })

    const list = Effect.fn("Keys.list")(function*(tenantRef: string | number) {
      const tenant = yield* tenants.get(tenantRef)
      return yield* repo.list(tenant.id)
    })

    const revoke = Effect.fn("Keys.revoke")(function*(prefix: string) {
      const revoked = yield* repo.revokeByPrefix(prefix)
      if (revoked.length === 0) return yield* new KeyNotFound({ prefix })
      return revoked
    })

    const live = Effect.fn("Keys.live")(function*(prefix: string) {
      const found = yield* repo.findLiveByPrefix(prefix)
      if (found.length === 0) return yield* new KeyNotFound({ prefix })
      return found
    })

    const setDailyLimit = Effect.fn("Keys.setDailyLimit")(function*(prefix: string, dailyLimit: number) {
      const changed = yield* repo.setDailyLimit(prefix, yield* checkDailyLimit(dailyLimit))
      if (changed.length === 0) return yield* new KeyNotFound({ prefix })
      return changed
    })

    return Keys.of({ mint, authenticate, authenticateClaiming, list, revoke, live, setDailyLimit })
  }))
}
