/** Storage port for webhook subscriptions. Every method is scoped by tenant. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { EventKind } from "../outbox/Outbox.ts"
import type { Hook } from "./Hook.ts"

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
}>()("chamber/HookRepo") {}
