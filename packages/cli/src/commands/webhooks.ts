/**
 * `chamber hooks …` and `chamber deliveries …` (docs/cli.md "Webhooks"): subscriptions and their
 * health (as GET /api/v1/hooks/{hook} says it), deliveries and their attempts, reactivation,
 * secret rotation and replay.
 */
import * as Effect from "effect/Effect"
import { DEACTIVATION_WARNING_AT, type DeliveryView, type HookView, MAX_PREVIOUS_EXPIRES_IN, WebhookAdmin } from "@chamber/core"
import { WebhookAdminSql } from "@chamber/pg-adapter"
import { waited } from "../Durations.ts"
import { bold, dim, green, table, yellow } from "../Output.ts"
import { noHook, rotateHookSecret } from "../RotateSecret.ts"
import { run } from "../Run.ts"

type Json = { readonly json?: boolean }

const admin = <A, E, R>(f: (admin: WebhookAdmin["Service"]) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(WebhookAdmin, f).pipe(Effect.provide(WebhookAdminSql))

/** A row id the operator typed: a positive integer, or a plain error. */
const idOf = (text: string, what: string) =>
  /^[1-9][0-9]{0,15}$/.test(text) ? Effect.succeed(Number(text)) : Effect.fail(new Error(`${what} must be a positive integer, not "${text}".`))

/** The health in words: inactive, about to be deactivated (15 or more failures in a row), or active. */
export const healthWords = (h: Pick<HookView, "active" | "failure_count" | "failures_before_deactivation">) =>
  !h.active
    ? "INACTIVE"
    : h.failure_count >= DEACTIVATION_WARNING_AT
    ? `DEACTIVATING: ${h.failures_before_deactivation} more failed deliveries deactivate it`
    : "active"

const hookRow = (h: HookView) => ({ ...h, events: h.events.join(","), health: healthWords(h), left: h.failures_before_deactivation })
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
    human: (hooks) => table(hooks.map(hookRow), ["id", "url", "events", "health", "failure_count", "left", "last_failure_at", "last_success_at"])
  })

export const hooksShow = (id: string, opts: Json) =>
  run(opts, Effect.gen(function*() {
    const hookId = yield* idOf(id, "The subscription id")
    const hook = yield* admin((a) => a.hook(hookId))
    if (hook === undefined) return yield* Effect.fail(noHook(hookId))
    const deliveries = yield* admin((a) => a.deliveries({ hookId, limit: 20 }))
    return { ...hook, deliveries }
  }), {
    json: (h) => h,
    human: (h) =>
      [
        `${bold(h.url)} ${dim(`#${h.id}, ${h.tenant}`)}`,
        `events: ${h.events.join(", ")}`,
        `${h.active ? (h.failure_count >= DEACTIVATION_WARNING_AT ? yellow(healthWords(h)) : green("active")) : bold("INACTIVE")}, ${h.failure_count} failed ` +
        `in a row, ${h.failures_before_deactivation} before deactivation; last failure ${h.last_failure_at ?? "-"}, last success ${h.last_success_at ?? "-"}`,
        "",
        table(h.deliveries.map(deliveryRow), ["id", "event", "type", "status", "attempts", "last", "next", "created"])
      ].join("\n")
  })

/** Active again with its count at 0; one already active says so (and has its count reset, if any). */
export const hooksReactivate = (id: string, opts: Json) =>
  run(opts, Effect.gen(function*() {
    const hookId = yield* idOf(id, "The subscription id")
    const before = yield* admin((a) => a.hook(hookId))
    if (before === undefined) return yield* Effect.fail(noHook(hookId))
    if (before.active && before.failure_count === 0) return { ...before, already_active: true, failures_reset: 0 }
    if (!(yield* admin((a) => a.reactivate(hookId)))) return yield* Effect.fail(noHook(hookId))
    const after = yield* admin((a) => a.hook(hookId))
    if (after === undefined) return yield* Effect.fail(noHook(hookId))
    return { ...after, already_active: before.active, failures_reset: before.failure_count }
  }), {
    json: ({ failures_reset: _, ...h }) => h,
    human: (h) =>
      !h.already_active
        ? `${green("Reactivated")} ${h.url} ${dim("(failure count 0; its waiting deliveries go out)")}`
        : h.failures_reset === 0
        ? `${h.url} was already active, with no failures to reset: nothing changed.`
        : `${h.url} was already active; its failure count went from ${h.failures_reset} to 0.`
  })

/**
 * A new signing secret for the subscription, shown once; the old one keeps signing beside it for
 * `--previous-expires-in` seconds (default a day; 0 ends it at once), as POST
 * /api/v1/hooks/{hook}/rotate-secret does.
 */
export const hooksRotateSecret = (id: string, opts: Json & { previousExpiresIn?: string }) =>
  run(opts, Effect.gen(function*() {
    const hookId = yield* idOf(id, "The subscription id")
    const text = opts.previousExpiresIn
    if (text !== undefined && (!/^\d{1,6}$/.test(text) || Number(text) > MAX_PREVIOUS_EXPIRES_IN)) {
      return yield* Effect.fail(new Error(`--previous-expires-in must be a whole number of seconds from 0 to ${MAX_PREVIOUS_EXPIRES_IN}, not "${text}".`))
    }
    return yield* rotateHookSecret(hookId, text === undefined ? undefined : Number(text)).pipe(Effect.provide(WebhookAdminSql))
  }), {
    json: (r) => r,
    human: (r) =>
      [
        `${green("New secret")} for ${r.url} ${dim("(shown once)")}:`,
        `  ${bold(r.secret)}`,
        `The previous secret signs beside it until ${r.previous_expires_at}.`
      ].join("\n")
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

const listed = (ids: ReadonlyArray<number>) => ids.join(", ")

/**
 * Queues deliveries again. Every id must name a delivery (else nothing is queued); one already
 * waiting to be sent is left as it is and said so.
 */
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
      if ((yield* admin((a) => a.hook(hookId))) === undefined) return yield* Effect.fail(noHook(hookId))
      wanted = (yield* admin((a) => a.deliveries({ hookId, status: "failed", since: opts.since, limit: 100_000 }))).map((d) => d.id)
    } else {
      if (ids.length === 0) return yield* Effect.fail(new Error("Name the deliveries to replay (ids), or --hook ID --failed [--since ISO]."))
      wanted = [...new Set(yield* Effect.forEach(ids, (id) => idOf(id, "A delivery id")))]
      const found = new Set((yield* admin((a) => a.deliveries({ ids: wanted, limit: wanted.length }))).map((d) => d.id))
      const missing = wanted.filter((id) => !found.has(id))
      if (missing.length > 0) {
        return yield* Effect.fail(new Error(missing.length === 1 ? `No delivery ${missing[0]}.` : `No deliveries ${listed(missing)}.`))
      }
    }
    const replayed = yield* admin((a) => a.replay(wanted))
    return { replayed, skipped: wanted.filter((id) => !replayed.includes(id)) }
  }), {
    json: (r) => r,
    human: (r) => {
      const waiting = r.skipped.length === 0 ? "" : `${listed(r.skipped)} ${r.skipped.length === 1 ? "was" : "were"} already waiting to be sent`
      if (r.replayed.length === 0) return r.skipped.length === 0 ? "No failed deliveries to replay." : `Nothing queued: ${waiting}.`
      return `${green("Queued again")} ${r.replayed.length} ${r.replayed.length === 1 ? "delivery" : "deliveries"}` + (waiting === "" ? "" : dim(` (${waiting})`))
    }
  })

/** The whole database's backlog: what the metrics' backlog gauges report (docs/operations.md "Metrics and traces"). */
export const deliveriesSummary = (opts: Json) =>
  run(opts, admin((a) => a.backlog), {
    json: (b) => b,
    human: (b) =>
      [
        `${bold(String(b.due))} ${b.due === 1 ? "delivery" : "deliveries"} due now${b.due === 0 ? "" : `, the oldest due for ${bold(waited(b.oldest_due_seconds))}`}`,
        `${b.held} held behind an earlier delivery of the same resource`,
        `subscriptions: ${b.active_subscriptions} active, ${b.inactive_subscriptions === 0 ? "0 inactive" : bold(`${b.inactive_subscriptions} inactive`)}`
      ].join("\n")
  })

