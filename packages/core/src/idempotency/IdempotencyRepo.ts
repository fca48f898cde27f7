/**
 * Kept answers of requests sent with an Idempotency-Key (ruling 28, docs/api.md "Retrying
 * safely"). A key's row is first a claim, committed on its own so that every API instance sees
 * that a request with it is running, with a lease so that a claim whose request died ends;
 * then, in the transaction of the change it answered, the kept answer.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { KeyContext } from "../key/ApiKey.ts"

/** Whose key it is: the chamber, the API key and the value sent. Other API keys never see it. */
export interface IdempotencyScope {
  readonly tenantId: number
  readonly keyId: number
  readonly value: string
}

/** A kept answer: the request it answered (method, path, SHA-256 of the body) and its status and exact body. */
export interface KeptAnswer {
  readonly fingerprint: string
  readonly status: number
  readonly body: Uint8Array
}

/**
 * What a claim found: the key was free (or its last use expired, or its claim's lease ran out)
 * and is now this request's; another request with it is running; or its answer is kept.
 */
export type Claim =
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Running" }
  | { readonly _tag: "Kept"; readonly answer: KeptAnswer }

export interface ClaimTimes {
  /** Now, in epoch milliseconds. */
  readonly nowMs: number
  /** How long the claim holds the key unless its request keeps an answer or lets go. */
  readonly leaseMs: number
  /** Kept answers made before this (epoch milliseconds) are expired: the key is free again. */
  readonly keptAfterMs: number
}

/** The API key a request authenticated with, and what claiming its Idempotency-Key under it found. */
export interface KeyClaim {
  readonly key: KeyContext
  readonly claim: Claim
}

export class IdempotencyRepo extends Context.Service<IdempotencyRepo, {
  /**
   * Finds the active API key with this hash (as `ApiKeyRepo.findActiveByHash`) and claims the
   * Idempotency-Key `value` under it for `owner`, in one statement committed at once (not in the
   * caller's transaction); undefined, and nothing claimed, when no active key has that hash.
   */
  readonly claimWithKey: (keyHash: string, value: string, owner: string, times: ClaimTimes) => Effect.Effect<KeyClaim | undefined>
  /** Keeps `owner`'s answer in the caller's transaction; false when the claim is no longer `owner`'s (its lease ran out and another took it). */
  readonly keep: (scope: IdempotencyScope, owner: string, answer: KeptAnswer) => Effect.Effect<boolean>
  /** Lets go of `owner`'s claim: nothing was kept, and a retry runs afresh. */
  readonly release: (scope: IdempotencyScope, owner: string) => Effect.Effect<void>
  /** Deletes at most `batch` keys used before `beforeMs` (kept answers, and claims whose lease ran out by `nowMs`); how many it deleted. */
  readonly prune: (beforeMs: number, nowMs: number, batch: number) => Effect.Effect<number>
}>()("chamber/IdempotencyRepo") {}
