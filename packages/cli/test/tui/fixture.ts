/**
 * An in-memory AdminData for the TUI's tests and docs/admin.md's captures: a chamber with keys,
 * subscriptions in every state of health and deliveries with attempts, at a fixed time. `down`
 * makes every call reject as a database that went away does; `calls` records what was asked.
 */
import { READ_SCOPES } from "@chamber/core"
import type { AdminData, AttemptView, BacklogView, DeliveryView, HookRow, KeyRow, MintRequest, SubscriptionBacklog, TenantRow } from "../../src/tui/AdminData.ts"
import { DataError } from "../../src/tui/AdminData.ts"

export const NOW = Date.parse("2026-11-22T14:00:00.000Z")
const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString()

export const RIVERSIDE = "chm_4fQk2ZpL9sTx7BnA"
/** The secret a rotation answers. */
export const ROTATED_SECRET = "whsec_q3Zr0Jm6bS4JHkM1l3Xv9dQn2tW8yPcE5aFgU7oLxKs="
export const LAKESIDE = "chm_8cVn3RtY6wQe1ZoP"
export const MINTED_KEY = "cck_Q7m2Xv9KpL4tR8wZ3nB6yH1cF5dJ0gS2aE7uM9kT"
/** `read`: every `:read` scope but the opt-in bookings:read (docs/api.md "Authentication and scopes"). */
export const READ: ReadonlyArray<string> = READ_SCOPES

const attempt = (minutesAgo: number, status: number | null, latency: number, excerpt: string | null, error: string | null = null): AttemptView => ({
  attempted_at: at(minutesAgo),
  status,
  latency_ms: latency,
  response_excerpt: excerpt,
  error
})

const failedAttempts = (minutesAgo: number) => [
  attempt(minutesAgo, 500, 212, "Internal Server Error: upstream crm-db timeout", "the destination answered 500"),
  attempt(minutesAgo - 1, 500, 198, "Internal Server Error: upstream crm-db timeout", "the destination answered 500"),
  attempt(minutesAgo - 31, 503, 87, "Service Unavailable", "the destination answered 503"),
  attempt(minutesAgo - 391, 500, 240, "Internal Server Error: upstream crm-db timeout", "the destination answered 500")
]

export interface FixtureOptions {
  tenants?: ReadonlyArray<TenantRow>
  keys?: ReadonlyArray<KeyRow>
  hooks?: ReadonlyArray<HookRow>
  deliveries?: ReadonlyArray<DeliveryView>
  admins?: ReadonlyArray<string>
}

export const riverside = (): Required<FixtureOptions> => ({
  tenants: [
    { id: RIVERSIDE, name: "Riverside Chamber of Commerce", created_at: at(60 * 24 * 40) },
    { id: LAKESIDE, name: "Lakeside Business Association", created_at: at(60 * 24 * 12) }
  ],
  admins: ["ann.lee@riversidechamber.example", "ops@riversidechamber.example"],
  keys: [
    { id: 1, name: "Zapier", prefix: "cck_Zp41mQ8x", scopes: READ, daily_limit: 25_000, created_at: at(60 * 24 * 30), last_used_at: at(2), revoked_at: null, used_today: 1_204 },
    { id: 2, name: "CRM sync", prefix: "cck_Cr7Tn2Wd", scopes: ["members:read", "members:write", "contacts:read", "contacts:write"], daily_limit: 5_000, created_at: at(60 * 24 * 9), last_used_at: at(0.2), revoked_at: null, used_today: 4_870 },
    { id: 3, name: "Old website", prefix: "cck_Ow3Lk9Pa", scopes: ["events:read"], daily_limit: 25_000, created_at: at(60 * 24 * 200), last_used_at: at(60 * 24 * 41), revoked_at: at(60 * 24 * 40), used_today: null }
  ],
  hooks: [
    {
      id: 1, tenant: RIVERSIDE, url: "https://hooks.zapier.example/catch/8812/ab3k", events: ["member.created", "member.updated"], active: true,
      failure_count: 0, failures_before_deactivation: 20, last_failure_at: null, last_success_at: at(4), created_at: at(60 * 24 * 30), recent: Array.from({ length: 20 }, () => true)
    },
    {
      id: 2, tenant: RIVERSIDE, url: "https://crm.riverside.example/webhooks/chamber", events: ["member.created", "invoice.paid", "contact.created"], active: true,
      failure_count: 3, failures_before_deactivation: 17, last_failure_at: at(6), last_success_at: at(60 * 3), created_at: at(60 * 24 * 9),
      recent: [true, true, true, true, false, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false]
    },
    {
      id: 3, tenant: RIVERSIDE, url: "https://old-site.riverside.example/hook", events: ["event.registration.created"], active: false,
      failure_count: 20, failures_before_deactivation: 0, last_failure_at: at(60 * 24 * 2), last_success_at: at(60 * 24 * 16), created_at: at(60 * 24 * 200),
      recent: Array.from({ length: 20 }, () => false)
    }
  ],
  deliveries: [
    { id: 815, hook_id: 1, url: "https://hooks.zapier.example/catch/8812/ab3k", event_id: "evt_7Hq2Lm9Rt4Vx8Kp1Zs3Bn6Wd", type: "member.created", status: "succeeded", attempt_count: 1, next_attempt_at: null, created_at: at(4), attempts: [attempt(4, 200, 64, "ok")] },
    { id: 814, hook_id: 2, url: "https://crm.riverside.example/webhooks/chamber", event_id: "evt_3Kd8Wq1Zp6Nm4Rt7Yx2Vb9Lc", type: "member.created", status: "pending", attempt_count: 1, next_attempt_at: new Date(NOW + 24 * 60_000).toISOString(), created_at: at(6), attempts: [attempt(6, 500, 205, "Internal Server Error: upstream crm-db timeout", "the destination answered 500")] },
    { id: 812, hook_id: 2, url: "https://crm.riverside.example/webhooks/chamber", event_id: "evt_9Tz4Xc7Vb2Nm5Lk8Jh3Gf6Ds", type: "invoice.paid", status: "failed", attempt_count: 4, next_attempt_at: null, created_at: at(400), attempts: failedAttempts(400) },
    { id: 809, hook_id: 2, url: "https://crm.riverside.example/webhooks/chamber", event_id: "evt_2Qw8Er5Ty1Ui4Op7As3Df6Gh", type: "contact.created", status: "failed", attempt_count: 4, next_attempt_at: null, created_at: at(430), attempts: failedAttempts(430) },
    { id: 790, hook_id: 3, url: "https://old-site.riverside.example/hook", event_id: "evt_5Zx1Cv4Bn7Mq2Wr9Et6Yu3Io", type: "event.registration.created", status: "failed", attempt_count: 4, next_attempt_at: null, created_at: at(60 * 24 * 2 + 400), attempts: [
      attempt(60 * 24 * 2 + 400, null, 10_000, null, "no answer within 10s"),
      attempt(60 * 24 * 2 + 399, null, 10_000, null, "no answer within 10s"),
      attempt(60 * 24 * 2 + 369, null, 31, null, "connection refused"),
      attempt(60 * 24 * 2, null, 28, null, "connection refused")
    ] },
    { id: 788, hook_id: 1, url: "https://hooks.zapier.example/catch/8812/ab3k", event_id: "evt_8Ui3Op6As9Df2Gh5Jk1Lz4Xc", type: "member.updated", status: "succeeded", attempt_count: 1, next_attempt_at: null, created_at: at(60 * 24 * 2 + 420), attempts: [attempt(60 * 24 * 2 + 420, 200, 71, "ok")] }
  ]
})

export interface Fake extends Omit<AdminData, "admins" | "mintKey" | "replay"> {
  /** Replaceable, for a test to make a call fail or wait. */
  admins: AdminData["admins"]
  mintKey: AdminData["mintKey"]
  replay: AdminData["replay"]
  down: boolean
  readonly calls: Array<string>
  /** What the relay would do next: the delivery settles, succeeded or failed, with one more attempt. */
  settle(id: number, ok: boolean): void
  /** Pending deliveries waiting behind an earlier one of their resource (the Backlog screen's `held`). */
  readonly held: Set<number>
  /** Calls to wait for (a promise each) before answering; tests open the gate to let data through. */
  hold: boolean
  release(): void
  readonly state: Required<FixtureOptions>
}

export const fake = (options: FixtureOptions = riverside()): Fake => {
  const base = riverside()
  const state: Required<FixtureOptions> = {
    tenants: options.tenants ?? base.tenants,
    keys: options.keys ?? [],
    hooks: options.hooks ?? [],
    deliveries: options.deliveries ?? [],
    admins: options.admins ?? base.admins
  }
  let waiting: Array<() => void> = []
  const self: Fake = {
    down: false,
    hold: false,
    calls: [],
    held: new Set(),
    state,
    release: () => {
      const w = waiting
      waiting = []
      w.forEach((f) => f())
    },
    settle: (id, ok) => {
      state.deliveries = state.deliveries.map((d) =>
        d.id !== id ? d : {
          ...d,
          status: ok ? "succeeded" : "failed",
          attempt_count: d.attempt_count + 1,
          next_attempt_at: null,
          attempts: [...d.attempts, { attempted_at: new Date(NOW).toISOString(), status: ok ? 200 : 500, latency_ms: 42, response_excerpt: ok ? "ok" : "no", error: ok ? null : "the destination answered 500" }]
        }
      )
    },
    tenants: () => answer("tenants", () => state.tenants),
    admins: (tenant) => answer(`admins ${tenant}`, () => state.admins),
    keys: (tenant) => answer(`keys ${tenant}`, () => state.keys),
    mintKey: (r: MintRequest) =>
      answer(`mint ${r.name} ${r.asEmail} ${r.scopes.join(",")} ${r.dailyLimit}`, () => {
        const prefix = MINTED_KEY.slice(0, 12)
        state.keys = [...state.keys, { id: 99, name: r.name, prefix, scopes: r.scopes, daily_limit: r.dailyLimit, created_at: new Date(NOW).toISOString(), last_used_at: null, revoked_at: null, used_today: 0 }]
        return { name: r.name, prefix, scopes: r.scopes, key: MINTED_KEY }
      }),
    revokeKey: (prefix) =>
      answer(`revoke ${prefix}`, () => {
        state.keys = state.keys.map((k) => (k.prefix === prefix ? { ...k, revoked_at: new Date(NOW).toISOString(), used_today: null } : k))
      }),
    hooks: (tenant) => answer(`hooks ${tenant}`, () => state.hooks),
    reactivate: (ids, progress) =>
      answer(`reactivate ${ids.join(",")}`, () => {
        state.hooks = state.hooks.map((x) => (ids.includes(x.id) ? { ...x, active: true, failure_count: 0, failures_before_deactivation: 20 } : x))
        progress?.(ids.length, ids.length)
        return ids.length
      }),
    deliveries: (q) =>
      answer(`deliveries ${q.status ?? "all"} ${q.hookId ?? "-"}${q.ids === undefined ? "" : ` ids ${q.ids.join(",")}`}`, () =>
        state.deliveries.filter((d) =>
          (q.status === undefined || d.status === q.status) && (q.hookId === undefined || d.hook_id === q.hookId) && (q.ids === undefined || q.ids.includes(d.id))
        )),
    failedDeliveries: (q) =>
      answer(`failed ${q.hookId ?? "-"} ${q.since ?? "-"}`, () =>
        state.deliveries.filter((d) => d.status === "failed" && (q.hookId === undefined || d.hook_id === q.hookId) && (q.since === undefined || d.created_at >= q.since)).map((d) => d.id)),
    replay: (ids, progress) =>
      answer(`replay ${ids.join(",")}`, () => {
        const replayed = state.deliveries.filter((d) => ids.includes(d.id) && d.status !== "pending").map((d) => d.id)
        state.deliveries = state.deliveries.map((d) => (replayed.includes(d.id) ? { ...d, status: "pending" as const, attempt_count: 0, next_attempt_at: new Date(NOW).toISOString() } : d))
        progress?.(ids.length, ids.length)
        return { replayed, skipped: ids.filter((id) => !replayed.includes(id)) }
      }),
    backlog: (tenant) => answer(`backlog ${tenant}`, () => backlogOf(state, self.held)),
    rotateSecret: (hookId) =>
      answer(`rotate ${hookId}`, () => ({
        id: hookId,
        url: state.hooks.find((x) => x.id === hookId)?.url ?? "",
        secret: ROTATED_SECRET,
        previous_expires_at: new Date(NOW + 86_400_000).toISOString()
      })),
    close: async () => undefined
  }
  const answer = async <A>(call: string, value: () => A): Promise<A> => {
    self.calls.push(call)
    if (self.hold) await new Promise<void>((resolve) => waiting.push(resolve))
    if (self.down) throw new DataError("unavailable", "PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:5432")
    return value()
  }
  return self
}

/** The backlog as the database would count it: pending deliveries due at NOW, held, or waiting for a later retry; the longest-waiting first. */
const backlogOf = (state: Required<FixtureOptions>, held: ReadonlySet<number>): BacklogView => {
  const subscriptions = state.hooks.map((x): SubscriptionBacklog => {
    const pending = state.deliveries.filter((d) => d.hook_id === x.id && d.status === "pending")
    const due = pending.filter((d) => Date.parse(d.next_attempt_at!) <= NOW)
    const oldest = due.reduce((m, d) => Math.max(m, (NOW - Date.parse(d.next_attempt_at!)) / 1000), 0)
    return {
      id: x.id, url: x.url, active: x.active, failure_count: x.failure_count,
      due: due.length, oldest_due_seconds: oldest, held: pending.filter((d) => held.has(d.id)).length, later: pending.length - due.length
    }
  }).sort((a, b) => b.oldest_due_seconds - a.oldest_due_seconds || b.due - a.due || b.held - a.held || a.id - b.id)
  const sum = (f: (b: SubscriptionBacklog) => number) => subscriptions.reduce((n, b) => n + f(b), 0)
  return {
    subscriptions,
    total: {
      due: sum((b) => b.due),
      oldest_due_seconds: Math.max(0, ...subscriptions.map((b) => b.oldest_due_seconds)),
      held: sum((b) => b.held),
      active_subscriptions: subscriptions.filter((b) => b.active).length,
      inactive_subscriptions: subscriptions.filter((b) => !b.active).length
    }
  }
}

/**
 * A receiver that stopped answering 12 minutes ago: subscription #2 has five member.updated
 * deliveries due since then, two of them held behind an earlier one of the same member.
 */
export const backedUp = (data: Fake): void => {
  const url = "https://crm.riverside.example/webhooks/chamber"
  const waiting = [820, 821, 822, 823, 824].map((id, i): DeliveryView => ({
    id, hook_id: 2, url, event_id: `evt_backlog${id}`, type: "member.updated", status: "pending", attempt_count: i < 3 ? 2 : 0,
    next_attempt_at: at(12 - i), created_at: at(12 - i), attempts: []
  }))
  data.state.deliveries = [...waiting.reverse(), ...data.state.deliveries]
  data.held.add(823)
  data.held.add(824)
}
