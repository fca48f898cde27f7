/**
 * The relay bench's work through the product's own services (deterministic, the same every
 * round): a chamber, its subscriptions (a spread of integrations, each under its own path of the
 * bench's receiver), events committed through `Outbox.append`, a month of settled history.
 */
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type pg from "pg"
import { AllowPrivateDestinations, type EventKind, Hooks, Outbox, Tenants, Transactor } from "../packages/core/src/index.ts"
import { StorageLive } from "../packages/pg-adapter/src/index.ts"
import { type Output, startNode } from "./processes.ts"
import { memberInputs } from "./seed-data.ts"
import { chamberArgs, sleep } from "./shared.ts"

/** The product's services on the bench database, webhook secrets stored encrypted under `secretKey` as in production: every relay opens them. */
export const relayRuntime = (dbUrl: string, secretKey: string) => {
  process.env.CHAMBER_SECRET_KEY = secretKey
  return ManagedRuntime.make(StorageLive({ _tag: "Postgres", url: dbUrl, maxConnections: 10 }))
}

/** The environment of the bench's relays: the bench database, its receiver on loopback and trusted (`ca`, PEM). */
export const relayEnv = (dbUrl: string, ca: string, extra: Record<string, string> = {}) => {
  const caFile = join(tmpdir(), `relay-bench-${process.pid}-ca.pem`)
  writeFileSync(caFile, ca)
  return { ...process.env, DATABASE_URL: dbUrl, CHAMBER_WEBHOOK_ALLOW_PRIVATE: "true", NODE_EXTRA_CA_CERTS: caFile, NODE_ENV: "production", NO_COLOR: "1", ...extra }
}

/** `chamber relay --json` as shipped, once it says it runs. */
export const startOurRelay = (env: NodeJS.ProcessEnv) => startNode("our relay", chamberArgs("relay", "--json"), env, /Webhook relay running/)

/** `count` relays started at once by `start`, what they print kept in `outputs`; half a second after they say they run, as they LISTEN just after. */
export const startRelays = async (count: number, start: () => ReturnType<typeof startOurRelay>, outputs: Array<Output>) => {
  const relays = await Promise.all(Array.from({ length: count }, () => start().then(({ child, output }) => (outputs.push(output), child))))
  await sleep(500)
  return relays
}

/** A subscription, its path and query on the receiver. */
export type Subscription = { readonly id: number; readonly path: string; readonly secret: string; readonly events: ReadonlyArray<EventKind> }

/** Four kinds of integration, in turn: everything, members and contacts, billing, events and deals. */
const INTEGRATIONS: ReadonlyArray<readonly [string, ReadonlyArray<EventKind>]> = [
  ["crm-sync", ["member.created", "member.updated", "contact.created", "invoice.issued", "invoice.paid", "event.registration.created", "deal.approved"]],
  ["directory", ["member.created", "member.updated", "contact.created"]],
  ["accounting", ["member.created", "invoice.issued", "invoice.paid"]],
  ["events-app", ["member.created", "member.updated", "event.registration.created", "deal.approved"]]
]

/** The kinds of the events committed, in this order, over and over. */
const EVENT_MIX: ReadonlyArray<EventKind> = [
  "member.updated", "member.created", "invoice.issued", "invoice.paid", "contact.created", "member.updated", "event.registration.created", "deal.approved"
]

/**
 * A chamber named `name` with `hookCount` subscriptions, the i-th on the receiver at `receiverUrl(i)`
 * under a path of its own, for the kinds of the integrations in turn, or for `only`.
 */
export const setupChamber = (name: string, hookCount: number, receiverUrl: (i: number) => string, only?: ReadonlyArray<EventKind>) =>
  Effect.gen(function*() {
    const tenant = yield* (yield* Tenants).create({ name, website: "https://relay-bench.example" })
    const hooks = yield* Hooks
    const subscriptions: Array<Subscription> = []
    for (let i = 0; i < hookCount; i++) {
      const [integration, kinds] = INTEGRATIONS[i % INTEGRATIONS.length]!
      const [path, events] = [`/hooks/${integration}/${i}?account=${1000 + i}`, only ?? kinds]
      const hook = yield* hooks.create(tenant.id, { url: receiverUrl(i) + path, events })
      subscriptions.push({ id: hook.id, path, secret: hook.secret, events })
    }
    return { tenantId: tenant.id, subscriptions }
    // The bench's receiver is on loopback (CHAMBER_WEBHOOK_ALLOW_PRIVATE=true, as its relays have it).
  }).pipe(Effect.provideService(AllowPrivateDestinations, true), Effect.orDie)

/** An event, and the deliveries it fans out to. */
export type PlannedEvent = { readonly type: EventKind; readonly data: unknown; readonly fanout: number }

/** A member as GET returns it (about 1 KB of JSON), the data of every event. */
const resources = memberInputs(200).map(({ custom_fields, ...attributes }, i) => {
  const created = new Date(Date.UTC(2026, 10, 1, 9, 0, i)).toISOString()
  const slug = attributes.name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")
  const custom = { membership_level: custom_fields?.membership_level ?? null, board_member: custom_fields?.board_member ?? null }
  return { id: 5001 + i, attributes: { ...attributes, slug, custom_fields: custom }, created_at: created, updated_at: created }
})

/**
 * Events from the mix, starting at `offset` in it, until they fan out to at least `deliveries`,
 * about the first `resourceCount` resources in turn (1: every event is about one hot resource,
 * whose deliveries to each subscription go out one after another, ruling 32).
 */
export const planEvents = (subscriptions: ReadonlyArray<Subscription>, deliveries: number, offset = 0, resourceCount = resources.length): Array<PlannedEvent> => {
  const out: Array<PlannedEvent> = []
  for (let [i, total] = [offset, 0]; total < deliveries; i++) {
    const type = EVENT_MIX[i % EVENT_MIX.length]!
    out.push({ type, data: resources[i % Math.min(resourceCount, resources.length)], fanout: fanoutOf(subscriptions, type) })
    total += out[out.length - 1]!.fanout
  }
  return out
}

/** The mean deliveries per event of the mix. */
export const meanFanout = (subscriptions: ReadonlyArray<Subscription>) => EVENT_MIX.reduce((n, type) => n + fanoutOf(subscriptions, type), 0) / EVENT_MIX.length
const fanoutOf = (subscriptions: ReadonlyArray<Subscription>, type: EventKind) => subscriptions.filter((s) => s.events.includes(type)).length

/** Appends the events in one transaction; their ids, and performance.now() once COMMIT has returned. */
export const commitEvents = (tenantId: number, events: ReadonlyArray<PlannedEvent>) =>
  Effect.gen(function*() {
    const outbox = yield* Outbox
    const appended = yield* (yield* Transactor).withTransaction(Effect.forEach(events, (e) => outbox.append(tenantId, e.type, e.data)))
    return { ids: appended.map((e) => e.id), committedAt: performance.now() }
  })

/**
 * A month of settled history, as a chamber running for a while has (within the retention): events
 * each delivered to the subscriptions of its kind, one successful attempt each, so that the relay's
 * statements meet tables of a realistic size with statistics to match. Kept across rounds; the
 * highest ids of the history, above which a round's rows are.
 */
export const seedHistory = async (db: pg.Client, tenantId: number, subscriptions: ReadonlyArray<Subscription>, deliveries: number) => {
  const hooks = subscriptions.filter((s) => s.events.includes("member.updated")).map((s) => s.id)
  const events = Math.ceil(deliveries / Math.max(1, hooks.length))
  await db.query(
    `INSERT INTO outbox_events (event_id, tenant_id, type, payload, created_at)
     SELECT 'evt_history' || lpad(g::text, 13, '0'), $1, 'member.updated', $2::jsonb, now() - interval '30 days' + g * (interval '29 days' / $3)
     FROM generate_series(1, $3) g`,
    [tenantId, JSON.stringify(planEvents(subscriptions, 1)[0]!.data), events]
  )
  await db.query(
    `INSERT INTO webhook_deliveries (tenant_id, event_id, hook_id, resource, status, attempt_count, next_attempt_at, created_at, settled_at)
     SELECT e.tenant_id, e.id, h, 'members/' || (e.payload ->> 'id'), 'succeeded', 1, e.created_at, e.created_at, e.created_at + interval '1 second'
     FROM outbox_events e CROSS JOIN unnest($1::bigint[]) h WHERE e.event_id LIKE 'evt_history%' ORDER BY e.id, h`,
    [hooks]
  )
  await db.query(
    `INSERT INTO webhook_attempts (tenant_id, delivery_id, attempted_at, status, latency_ms, response_excerpt)
     SELECT tenant_id, id, created_at + interval '1 second', 200, 40, 'ok' FROM webhook_deliveries ORDER BY id`
  )
  const max = (await db.query(`SELECT (SELECT max(id) FROM outbox_events) AS events, (SELECT max(id) FROM webhook_deliveries) AS deliveries,
    (SELECT max(id) FROM webhook_attempts) AS attempts`)).rows[0]
  return { events: Number(max.events ?? 0), deliveries: Number(max.deliveries ?? 0), attempts: Number(max.attempts ?? 0) }
}

/**
 * One event a transaction, the i-th `intervalMs` * i after the start, while `next(i)` gives one;
 * `committed` is told each event's id and the moment its COMMIT returned. Resolves once all committed.
 */
export const commitPaced = async (
  commit: (events: ReadonlyArray<PlannedEvent>) => Promise<{ readonly ids: ReadonlyArray<string>; readonly committedAt: number }>,
  intervalMs: number,
  next: (i: number) => PlannedEvent | undefined,
  committed: (id: string, at: number, i: number) => void
) => {
  const [t0, commits] = [performance.now(), [] as Array<Promise<void>>]
  for (let i = 0;; i++) {
    const wait = t0 + i * intervalMs - performance.now()
    if (wait > 0) await sleep(wait)
    const event = next(i)
    if (event === undefined) break
    commits.push(commit([event]).then(({ ids, committedAt }) => committed(ids[0]!, committedAt, i)))
  }
  await Promise.all(commits)
}
