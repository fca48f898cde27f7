/** Storage port for webhook subscriptions. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { EventKind } from "../outbox/Outbox.ts"
import type { Page } from "../Pagination.ts"
import type { Hook } from "./Hook.ts"
import type { DeliveryStatus, HookDelivery } from "./HookDelivery.ts"

/** A subscription with what its relay counts of it. */
export interface HookCounts extends Hook {
  readonly failure_count: number
  readonly last_success_at: string | null
  readonly last_failure_at: string | null
}

/** What signs a subscription's deliveries: its URL, its sealed secret, and its previous one while that still signs. */
export interface HookSigning {
  readonly url: string
  readonly sealedSecret: string
  readonly sealedPrevious: string | null
}

export class HookRepo extends Context.Service<HookRepo, {
  /** Every subscription of the tenant, oldest first. */
  readonly list: (tenantId: number) => Effect.Effect<ReadonlyArray<Hook>>
  /**
   * A new subscription with `sealedSecret`, or, when the tenant already has one for `url`, that
   * one with its event list replaced, active again and its failure count reset (ruling 22). Its
   * stored (sealed) secret either way.
   */
  readonly upsert: (
    tenantId: number,
    url: string,
    events: ReadonlyArray<EventKind>,
    sealedSecret: string
  ) => Effect.Effect<{ readonly hook: Hook; readonly sealedSecret: string; readonly created: boolean }>
  /** False when the tenant has no such subscription. */
  readonly delete: (tenantId: number, id: number) => Effect.Effect<boolean>
  /** The subscription with its counts; undefined when the tenant has no such subscription. */
  readonly counts: (tenantId: number, id: number) => Effect.Effect<HookCounts | undefined>
  readonly signing: (tenantId: number, id: number) => Effect.Effect<HookSigning | undefined>
  /**
   * `sealedSecret` becomes the secret; the one it replaces signs beside it for
   * `previousExpiresIn` seconds more (any older one ends at once). When the previous one ends;
   * undefined when the tenant has no such subscription.
   */
  readonly rotate: (tenantId: number, id: number, sealedSecret: string, previousExpiresIn: number) => Effect.Effect<string | undefined>
}>()("chamber/HookRepo") {}

/** Storage port for a subscription's deliveries, every method scoped by tenant and subscription. */
export class HookDeliveryRepo extends Context.Service<HookDeliveryRepo, {
  /** Newest first, 100 a page. */
  readonly page: (tenantId: number, hookId: number, status: DeliveryStatus | undefined, page: number) => Effect.Effect<Page<HookDelivery>>
  /** Due now with a fresh set of retries (its attempts kept); undefined when there is no such delivery. */
  readonly replay: (tenantId: number, hookId: number, deliveryId: number) => Effect.Effect<HookDelivery | undefined>
  /** Every failed delivery created in [since, until) due again with fresh retries, oldest first; how many. */
  readonly recover: (tenantId: number, hookId: number, since: string, until: string | undefined) => Effect.Effect<number>
}>()("chamber/HookDeliveryRepo") {}
