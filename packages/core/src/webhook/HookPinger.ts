/**
 * The port a ping goes out through (ruling 31): one signed attempt made at once, with the
 * relay's timeout and destination rules, reported and not stored. The relay implements it
 * (webhook-relay Ping.ts); a server without it does not compile.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { PingEvent, PingResult } from "./HookActions.ts"

export class HookPinger extends Context.Service<HookPinger, {
  /** Signed with `secret` (and `previous` beside it during a rotation's overlap). Never fails: a failure is a result. */
  readonly send: (url: string, secret: string, previous: string | null, event: PingEvent) => Effect.Effect<PingResult>
}>()("chamber/HookPinger") {}

/**
 * Whether a subscription's URL may name a loopback or private literal address
 * (CHAMBER_WEBHOOK_ALLOW_PRIVATE=true, development and tests only; link-local, metadata and other
 * non-public addresses stay refused). Off unless provided.
 */
export const AllowPrivateDestinations = Context.Reference<boolean>("chamber/AllowPrivateDestinations", { defaultValue: () => false })
