/**
 * `chamber hooks …` and `chamber deliveries …` (docs/cli.md "Webhooks"): subscriptions and their
 * health, deliveries and their attempts, reactivation and replay.
 */
import * as Effect from "effect/Effect"
import { type DeliveryView, type HookHealth, WebhookAdmin, WebhookAdminSql } from "@chamber/webhook-relay"
import { bold, dim, green, table } from "../Output.ts"
import { run } from "../Run.ts"

type Json = { readonly json?: boolean }

const admin = <A, E, R>(f: (admin: WebhookAdmin["Service"]) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(WebhookAdmin, f).pipe(Effect.provide(WebhookAdminSql))

/** A row id the operator typed: a positive integer, or a plain error. */
const idOf = (text: string, what: string) =>
  /^[1-9][0-9]{0,15}$/.test(text) ? Effect.succeed(Number(text)) : Effect.fail(new Error(`${what} must be a positive integer, not "${text}".`))

const hookRow = (h: HookHealth) => ({ ...h, events: h.events.join(","), health: h.active ? "active" : "INACTIVE" })
const lastAttempt = (d: DeliveryView) => d.attempts[d.attempts.length - 1]
const deliveryRow = (d: DeliveryView) => {
  const last = lastAttempt(d)
  return {
    id: d.id,
    hook: d.hook_id,
    event: d.event_id,
    type: d.type,
    status: d.status,
    attempts: d.attempt_count,
    last: last === undefined ? null : last.status ?? last.error,
    next: d.next_attempt_at,
    created: d.created_at
  }
}

export const hooksList = (opts: Json & { tenant: string }) =>
  run(opts, admin((a) => a.hooks(opts.tenant)), {
    json: (hooks) => hooks,
    human: (hooks) => table(hooks.map(hookRow), ["id", "url", "events", "health", "failure_count", "last_failure_at", "last_success_at"])
  })

export const hooksShow = (id: string, opts: Json) =>
  run(opts, Effect.gen(function*() {
    const hookId = yield* idOf(id, "The subscription id")
    const hook = yield* admin((a) => a.hook(hookId))
    if (hook === undefined) return yield* Effect.fail(new Error(`No webhook subscription ${hookId}.`))
    const deliveries = yield* admin((a) => a.deliveries({ hookId, limit: 20 }))
    return { ...hook, deliveries }
  }), {
    json: (h) => h,
    human: (h) =>
      [
        `${bold(h.url)} ${dim(`#${h.id}, ${h.tenant}`)}`,
        `events: ${h.events.join(", ")}`,
        `${h.active ? green("active") : bold("INACTIVE")}, ${h.failure_count} failed in a row; last failure ${h.last_failure_at ?? "-"}, last success ${
          h.last_success_at ?? "-"
        }`,
        "",
        table(h.deliveries.map(deliveryRow), ["id", "event", "type", "status", "attempts", "last", "next", "created"])
      ].join("\n")
  })

export const hooksReactivate = (id: string, opts: Json) =>
  run(opts, Effect.gen(function*() {
    const hookId = yield* idOf(id, "The subscription id")
    if (!(yield* admin((a) => a.reactivate(hookId)))) return yield* Effect.fail(new Error(`No webhook subscription ${hookId}.`))
    return (yield* admin((a) => a.hook(hookId)))!
  }), {
    json: (h) => h,
    human: (h) => `${green("Reactivated")} ${h.url} ${dim("(failure count 0; its waiting deliveries go out)")}`
  })

const STATUSES = ["pending", "failed", "succeeded"] as const

export const deliveriesList = (opts: Json & { tenant: string; status?: string; hook?: string }) =>
  run(opts, Effect.gen(function*() {
    const status = opts.status
    if (status !== undefined && !(STATUSES as ReadonlyArray<string>).includes(status)) {
      return yield* Effect.fail(new Error(`--status must be one of ${STATUSES.join(", ")}, not "${status}".`))
    }
    const hookId = opts.hook === undefined ? undefined : yield* idOf(opts.hook, "--hook")
    return yield* admin((a) => a.deliveries({ tenant: opts.tenant, hookId, status: status as (typeof STATUSES)[number] | undefined }))
  }), {
    json: (ds) => ds,
    human: (ds) => table(ds.map(deliveryRow), ["id", "hook", "event", "type", "status", "attempts", "last", "next", "created"])
  })

export const deliveriesReplay = (ids: ReadonlyArray<string>, opts: Json & { hook?: string; failed?: boolean; since?: string }) =>
  run(opts, Effect.gen(function*() {
    let wanted: Array<number>
    if (opts.hook !== undefined) {
      if (ids.length > 0) return yield* Effect.fail(new Error("Give delivery ids, or --hook ID --failed, not both."))
      if (opts.failed !== true) return yield* Effect.fail(new Error("--hook replays failed deliveries only: add --failed."))
      if (opts.since !== undefined && Number.isNaN(Date.parse(opts.since))) {
        return yield* Effect.fail(new Error(`--since must be an ISO date or date-time, not "${opts.since}".`))
      }
      const hookId = yield* idOf(opts.hook, "--hook")
      wanted = (yield* admin((a) => a.deliveries({ hookId, status: "failed", since: opts.since, limit: 100_000 }))).map((d) => d.id)
    } else {
      if (ids.length === 0) return yield* Effect.fail(new Error("Name the deliveries to replay (ids), or --hook ID --failed [--since ISO]."))
      wanted = yield* Effect.forEach(ids, (id) => idOf(id, "A delivery id"))
    }
    const replayed = yield* admin((a) => a.replay(wanted))
    return { replayed, skipped: wanted.filter((id) => !replayed.includes(id)) }
  }), {
    json: (r) => r,
    human: (r) =>
      `${green("Queued again")} ${r.replayed.length} ${r.replayed.length === 1 ? "delivery" : "deliveries"}` +
      (r.skipped.length > 0 ? dim(` (not found or already waiting: ${r.skipped.join(", ")})`) : "")
  })
