/**
 * The relay's database side (docs/webhooks.md "Delivery") on every storage runtime, with a
 * scripted sender in place of the network (the network side is tested in sender.test.ts): leases
 * and SKIP LOCKED, per-subscription caps, retries then failure, the consecutive-failure count
 * (deactivation at 20, reset by a success), releasing leases, ordered delivery, what a claim and a
 * write read over a backlog, and a relay loop that delivers each event once.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import { type AttemptOutcome, type ClaimedDelivery, DeliveryStore, Hooks, Members, Tenants, Transactor, WebhookAdmin } from "@chamber/core"
import { DeliveryStoreSql, StorageLive, WebhookAdminSql } from "@chamber/pg-adapter"
import { DatabaseConfigRef, runtimes } from "@chamber/pg-adapter/testing"
import { runRelay } from "../src/index.ts"

const storageOn = (rt: ReturnType<typeof runtimes>[number]) =>
  Layer.merge(DeliveryStoreSql, WebhookAdminSql).pipe(
    Layer.provideMerge(Layer.unwrap(Effect.map(Effect.service(DatabaseConfigRef), (config) => StorageLive(config)))),
    Layer.provide(rt.database)
  )

let n = 0
/** A chamber with one subscription to member.created, and `events` members created (one delivery each). */
const chamberWithDeliveries = (events: number, hooks = 1) =>
  Effect.gen(function*() {
    const tenant = yield* (yield* Tenants).create({ name: `Relay ${++n}` })
    const subscriptions = yield* Hooks
    const made = yield* Effect.forEach(Array.from({ length: hooks }, (_, i) => i), (i) =>
      subscriptions.create(tenant.id, { url: `https://hooks.example.com/${n}/${i}`, events: ["member.created"] }))
    for (let i = 0; i < events; i++) yield* (yield* Members).create(tenant.id, { name: `Member ${i}`, status: "active" })
    return { tenant, hooks: made }
  }).pipe(Effect.orDie)

const outcome = (delivery: ClaimedDelivery, status: number): AttemptOutcome => ({
  delivery,
  attemptedAt: new Date(),
  ok: status >= 200 && status < 300,
  status,
  latencyMs: 0,
  responseExcerpt: status >= 300 ? "nope" : "ok",
  error: null,
  retryAfterSeconds: null
})

const claimOf = (relayId: string, limit = 100, perSubscription = 100, leaseMs = 60_000) =>
  Effect.flatMap(DeliveryStore, (s) => Effect.map(s.claim({ relayId, limit, leaseMs, perSubscription }), (c) => c.deliveries))

const mine = (tenantId: number) => (ds: ReadonlyArray<ClaimedDelivery>) => ds.filter((d) => d.tenantId === tenantId)

const subscription = (hookId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly failure_count: number; readonly active: boolean; readonly last_failure_at: Date | null; readonly last_success_at: Date | null }>`
      SELECT failure_count, active, last_failure_at, last_success_at FROM webhook_subscriptions WHERE id = ${hookId}`
    return rows[0]!
  }).pipe(Effect.orDie)

/** A claim looks at every chamber: the deliveries earlier tests left waiting are settled. */
const settleOtherChambers = (tenantId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE webhook_deliveries SET status = 'failed' WHERE status = 'pending' AND tenant_id <> ${tenantId}`).pipe(Effect.asVoid, Effect.orDie)

/** A claim looks at every chamber: the deliveries of chambers other than these are settled. */
const onlyChambers = (tenantIds: ReadonlyArray<number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE webhook_deliveries SET status = 'failed' WHERE status = 'pending' AND tenant_id <> ALL(${`{${tenantIds.join(",")}}`}::bigint[])`).pipe(
      Effect.asVoid,
      Effect.orDie
    )

/** The next tests' claims are not to meet these chambers' deliveries: settled. */
const settleChambers = (tenantIds: ReadonlyArray<number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE webhook_deliveries SET status = 'failed', lease_expires_at = NULL, leased_by = NULL
        WHERE status = 'pending' AND tenant_id = ANY(${`{${tenantIds.join(",")}}`}::bigint[])`).pipe(Effect.asVoid, Effect.orDie)

const deliveryRows = (tenantId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ readonly id: string; readonly status: string; readonly attempt_count: number; readonly attempts: string }>`
      SELECT d.id::text, d.status, d.attempt_count, (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id)::text AS attempts
      FROM webhook_deliveries d WHERE d.tenant_id = ${tenantId} ORDER BY d.id`
  }).pipe(Effect.orDie)

const now = () => 0

/** The name the delivered member had when its event fired. */
const nameOf = (d: ClaimedDelivery) => (d.event.data as { readonly attributes: { readonly name: string } }).attributes.name

/**
 * A chamber whose `hooks` subscriptions take member.created and member.updated: member M created
 * ("created") then patched twice ("one", "two"), and another member created ("other").
 */
const orderedChamber = (hooks: number) =>
  Effect.gen(function*() {
    const { tenant } = yield* chamberWithDeliveries(0, 0)
    const subscriptions = yield* Hooks
    for (let i = 0; i < hooks; i++) {
      yield* subscriptions.create(tenant.id, { url: `https://hooks.example.com/ordered/${n}/${i}`, events: ["member.created", "member.updated"] })
    }
    const members = yield* Members
    const m = yield* members.create(tenant.id, { name: "created", status: "active" })
    yield* members.update(tenant.id, m.id, { name: "one" })
    yield* members.update(tenant.id, m.id, { name: "two" })
    const other = yield* members.create(tenant.id, { name: "other", status: "active" })
    return { tenant, m, other }
  }).pipe(Effect.orDie)

/** A chamber whose one subscription takes member.created and member.updated, and member M created ("created"). */
const memberCreated = Effect.gen(function*() {
  const { tenant } = yield* chamberWithDeliveries(0, 0)
  yield* (yield* Hooks).create(tenant.id, { url: `https://hooks.example.com/one/${n}`, events: ["member.created", "member.updated"] })
  const members = yield* Members
  const m = yield* members.create(tenant.id, { name: "created", status: "active" })
  return { tenant, members, m }
}).pipe(Effect.orDie)

/** Claims and settles member `m`'s deliveries one claim after another until none is left; their names in the order claimed. */
const drain = (tenantId: number, m: { readonly id: number }, relayId = "drain") =>
  Effect.gen(function*() {
    const store = yield* DeliveryStore
    const names: Array<string> = []
    for (let i = 0; i < 20; i++) {
      const claimed = mine(tenantId)(yield* claimOf(relayId, 1_000)).filter((d) => (d.event.data as { readonly id: number }).id === m.id)
      if (claimed.length === 0) break
      names.push(...claimed.map(nameOf))
      yield* store.record(relayId, claimed.map((d) => outcome(d, 200)), now)
    }
    return names
  })

for (const rt of runtimes()) {
  describe(`the relay's store on ${rt.name}`, () => {
    // The real clock: the relay loop sleeps between polls.
    layer(storageOn(rt), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("claims lease deliveries: two relays never hold the same one; an expired lease is claimed again", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithDeliveries(6)
          const [a, b] = yield* Effect.all([claimOf("a", 4), claimOf("b", 4)], { concurrency: 2 })
          const ids = [...mine(tenant.id)(a), ...mine(tenant.id)(b)].map((d) => d.id)
          assert.strictEqual(new Set(ids).size, ids.length)
          assert.lengthOf(ids, 6)
          assert.lengthOf(mine(tenant.id)(yield* claimOf("c")), 0)
          // Relay "a" stops answering: once its lease runs out its deliveries are anyone's.
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE webhook_deliveries SET lease_expires_at = now() - interval '1 second' WHERE leased_by = 'a'`.pipe(Effect.orDie)
          const again = mine(tenant.id)(yield* claimOf("c"))
          assert.sameMembers(again.map((d) => d.id), mine(tenant.id)(a).map((d) => d.id))
          const first = again[0]!
          assert.match(Result.getOrThrow(first.secret), /^whsec_/)
          assert.strictEqual(first.url, `https://hooks.example.com/${n}/0`)
          assert.strictEqual(first.event.type, "member.created")
        }))

      it.effect("at most perSubscription deliveries of one subscription are leased at once, across relays", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithDeliveries(10, 2)
          const first = mine(tenant.id)(yield* claimOf("a", 100, 3))
          const byHook = (ds: ReadonlyArray<ClaimedDelivery>) => ds.reduce((m, d) => m.set(d.hookId, (m.get(d.hookId) ?? 0) + 1), new Map<number, number>())
          assert.deepStrictEqual([...byHook(first).values()], [3, 3])
          assert.lengthOf(mine(tenant.id)(yield* claimOf("b", 100, 3)), 0)
          yield* (yield* DeliveryStore).record("a", first.slice(0, 2).map((d) => outcome(d, 200)), now)
          assert.lengthOf(mine(tenant.id)(yield* claimOf("b", 100, 3)), 2)
        }))

      it.effect("a claim says when due deliveries were left for want of a place (so that freeing places is a reason to claim again)", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithDeliveries(6)
          yield* settleOtherChambers(tenant.id)
          const store = yield* DeliveryStore
          const claim = (relayId: string) => store.claim({ relayId, limit: 100, leaseMs: 60_000, perSubscription: 4 })
          const first = yield* claim("c1")
          assert.lengthOf(mine(tenant.id)(first.deliveries), 4)
          assert.isTrue(first.capped)
          const none = yield* claim("c2")
          assert.lengthOf(mine(tenant.id)(none.deliveries), 0)
          assert.isTrue(none.capped)
          yield* store.record("c1", mine(tenant.id)(first.deliveries).map((d) => outcome(d, 200)), now)
          const rest = yield* claim("c2")
          assert.lengthOf(mine(tenant.id)(rest.deliveries), 2)
          assert.isFalse(rest.capped)
        }))

      it.effect("relays recording at once over the same subscriptions wait for each other, never deadlock", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithDeliveries(24, 20)
          const store = yield* DeliveryStore
          const relays = ["r1", "r2", "r3", "r4"]
          // 120 each (earlier tests' waiting deliveries may come first).
          const held = yield* Effect.forEach(relays, (r) =>
            Effect.gen(function*() {
              const ours: Array<ClaimedDelivery> = []
              for (let i = 0; i < 20 && ours.length < 120; i++) ours.push(...mine(tenant.id)(yield* claimOf(r, 120 - ours.length)))
              return ours
            }))
          // Each relay writes its outcomes in batches spanning every subscription, each batch in its own order.
          let seed = 7
          const shuffled = <A>(xs: ReadonlyArray<A>) =>
            xs.map((x) => [(seed = (seed * 16807) % 2147483647), x] as const).sort((a, b) => a[0] - b[0]).map(([, x]) => x)
          yield* Effect.forEach(relays, (r, i) =>
            Effect.forEach(Array.from({ length: 6 }, (_, b) => shuffled(held[i]!.slice(b * 20, b * 20 + 20))), (batch) =>
              store.record(r, batch.map((d) => outcome(d, 200)), now), { discard: true }), { concurrency: "unbounded", discard: true })
          const rows = yield* deliveryRows(tenant.id)
          assert.lengthOf(rows, 480)
          assert.isTrue(rows.every((r) => r.status === "succeeded" && r.attempts === "1"))
        }))

      it.effect("a subscription's last success is kept to the second: successes less than a second apart leave its row as it is", () =>
        Effect.gen(function*() {
          const { tenant, hooks } = yield* chamberWithDeliveries(3)
          const store = yield* DeliveryStore
          const [a, b, c] = [...mine(tenant.id)(yield* claimOf("s"))].sort((x, y) => x.id - y.id)
          const at = (d: ClaimedDelivery, time: Date) => ({ ...outcome(d, 200), attemptedAt: time })
          const first = new Date(Date.now() - 10_000)
          yield* store.record("s", [at(a!, first)], now)
          yield* store.record("s", [at(b!, new Date(first.getTime() + 400))], now)
          assert.strictEqual((yield* subscription(hooks[0]!.id)).last_success_at?.getTime(), first.getTime())
          const later = new Date(first.getTime() + 2_000)
          yield* store.record("s", [at(c!, later)], now)
          assert.strictEqual((yield* subscription(hooks[0]!.id)).last_success_at?.getTime(), later.getTime())
          assert.deepStrictEqual((yield* deliveryRows(tenant.id)).map((r) => r.status), ["succeeded", "succeeded", "succeeded"])
        }))

      it.effect("500, 500, 500, 200: delivered at the 4th attempt, every attempt recorded; 4 failures: failed, counted once", () =>
        Effect.gen(function*() {
          const { tenant, hooks } = yield* chamberWithDeliveries(2)
          const store = yield* DeliveryStore
          const script = [[500, 500], [500, 500], [500, 500], [200, 503]]
          for (const [i, statuses] of script.entries()) {
            const claimed = [...mine(tenant.id)(yield* claimOf("r"))].sort((x, y) => x.id - y.id)
            assert.lengthOf(claimed, 2, `round ${i}`)
            assert.deepStrictEqual(claimed.map((d) => d.attemptCount), [i, i])
            yield* store.record("r", claimed.map((d, j) => outcome(d, statuses![j]!)), now)
          }
          assert.lengthOf(mine(tenant.id)(yield* claimOf("r")), 0)
          const rows = yield* deliveryRows(tenant.id)
          assert.deepStrictEqual(rows.map((r) => [r.status, r.attempt_count, r.attempts]), [["succeeded", 4, "4"], ["failed", 4, "4"]])
          // The success came first in the batch, then the failure: the count is 1.
          assert.deepInclude(yield* subscription(hooks[0]!.id), { failure_count: 1, active: true })
        }))

      it.effect("20 failed deliveries deactivate the subscription (no further attempts); 19 then a success leave it active at 0", () =>
        Effect.gen(function*() {
          const store = yield* DeliveryStore
          const failAll = (tenantId: number, statuses: (i: number) => number) =>
            Effect.gen(function*() {
              for (let round = 0; round < 4; round++) {
                const claimed = mine(tenantId)(yield* claimOf("r"))
                yield* store.record("r", claimed.map((d, i) => outcome(d, round < 3 ? 500 : statuses(i))), now)
              }
            })
          const dead = yield* chamberWithDeliveries(20)
          yield* failAll(dead.tenant.id, () => 500)
          const deadSub = yield* subscription(dead.hooks[0]!.id)
          assert.deepInclude(deadSub, { failure_count: 20, active: false })
          assert.isNotNull(deadSub.last_failure_at)
          yield* (yield* Members).create(dead.tenant.id, { name: "After", status: "active" })
          assert.lengthOf(mine(dead.tenant.id)(yield* claimOf("r")), 0)

          const alive = yield* chamberWithDeliveries(20)
          yield* failAll(alive.tenant.id, (i) => (i === 19 ? 200 : 500))
          const aliveSub = yield* subscription(alive.hooks[0]!.id)
          assert.deepInclude(aliveSub, { failure_count: 0, active: true })
          assert.isNotNull(aliveSub.last_success_at)
        }))

      it.effect("settled deliveries past the retention are pruned with their attempts, in batches; waiting ones never", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithDeliveries(5)
          const store = yield* DeliveryStore
          const claimed = [...mine(tenant.id)(yield* claimOf("p"))].sort((x, y) => x.id - y.id)
          yield* store.record("p", claimed.slice(0, 4).map((d, i) => outcome(d, i < 2 ? 200 : 500)), now)
          const sql = yield* SqlClient.SqlClient
          // Two settled long ago, one settled just now, two waiting (one of them failed once, to be retried).
          yield* sql`UPDATE webhook_deliveries SET settled_at = now() - interval '40 days'
            WHERE id IN ${sql.in(claimed.slice(0, 2).map((d) => d.id))}`.pipe(Effect.orDie)
          yield* sql`UPDATE webhook_deliveries SET status = 'failed', settled_at = now() WHERE id = ${claimed[2]!.id}`.pipe(Effect.orDie)
          const thirtyDays = 30 * 86_400_000
          assert.strictEqual(yield* store.prune(thirtyDays, 1), 1)
          assert.strictEqual(yield* store.prune(thirtyDays, 1_000), 1)
          assert.strictEqual(yield* store.prune(thirtyDays, 1_000), 0)
          const left = yield* deliveryRows(tenant.id)
          assert.sameMembers(left.map((r) => Number(r.id)), claimed.slice(2).map((d) => d.id))
          const orphans = yield* sql<{ readonly n: string }>`SELECT count(*)::text AS n FROM webhook_attempts
            WHERE delivery_id IN ${sql.in(claimed.slice(0, 2).map((d) => d.id))}`.pipe(Effect.orDie)
          assert.strictEqual(orphans[0]!.n, "0")
        }))

      it.effect("one delivery of a subscription and resource at a time, in commit order, until it succeeds or fails for good; other resources and subscriptions go meanwhile", () =>
        Effect.gen(function*() {
          const { tenant } = yield* orderedChamber(2)
          const store = yield* DeliveryStore
          // Of M, only the created of each subscription; the other member's created goes too.
          const first = mine(tenant.id)(yield* claimOf("o", 1_000))
          assert.sameMembers(first.map(nameOf), ["created", "created", "other", "other"])
          const [mine1, mine2] = first.filter((d) => nameOf(d) === "created")
          // The first subscription's fails once: retried first, its later ones held meanwhile.
          const failed = yield* store.record("o", [outcome(mine1!, 500)], now)
          assert.isFalse(failed.freed)
          const retry = mine(tenant.id)(yield* claimOf("o", 1_000))
          assert.deepStrictEqual(retry.map((d) => [d.id, nameOf(d), d.attemptCount]), [[mine1!.id, "created", 1]])
          assert.isTrue((yield* store.record("o", [outcome(retry[0]!, 200)], now)).freed)
          assert.deepStrictEqual(mine(tenant.id)(yield* claimOf("o", 1_000)).map(nameOf), ["one"])
          // The second subscription's fails for good (its retries spent): its next one goes.
          for (let i = 0; i < 4; i++) {
            const d = i === 0 ? mine2! : mine(tenant.id)(yield* claimOf("p", 1_000)).find((x) => x.hookId === mine2!.hookId)!
            assert.strictEqual(nameOf(d), "created")
            yield* store.record(i === 0 ? "o" : "p", [outcome(d, 500)], now)
          }
          assert.deepStrictEqual(mine(tenant.id)(yield* claimOf("p", 1_000)).map(nameOf), ["one"])
        }))

      it.effect("patches that commit while the relay settles the delivery they queued behind: the first is let go, not held for ever; the second waits for it", () =>
        Effect.gen(function*() {
          const { tenant, members, m } = yield* memberCreated
          const store = yield* DeliveryStore
          const [head] = mine(tenant.id)(yield* claimOf("w", 1_000))
          assert.strictEqual(nameOf(head!), "created")
          // Two patches append (queued behind the created) and stay open while the relay settles the created.
          const appended = yield* Deferred.make<void>()
          const commit = yield* Deferred.make<void>()
          const tx = yield* Transactor
          const patch = yield* Effect.forkChild(tx.withTransaction(Effect.gen(function*() {
            yield* members.update(tenant.id, m.id, { name: "one" })
            yield* members.update(tenant.id, m.id, { name: "two" })
            yield* Deferred.succeed(appended, undefined)
            yield* Deferred.await(commit)
          })))
          yield* Deferred.await(appended)
          const settle = yield* Effect.forkChild(store.record("w", [outcome(head!, 200)], now))
          yield* Effect.sleep(300)
          yield* Deferred.succeed(commit, undefined)
          yield* Fiber.join(patch)
          yield* Fiber.join(settle)
          assert.deepStrictEqual(mine(tenant.id)(yield* claimOf("w", 1_000)).map(nameOf), ["one"])
        }))

      it.effect("patches whose transactions begin in one order and commit in the other go out in commit order", () =>
        Effect.gen(function*() {
          const { tenant, members, m } = yield* memberCreated
          const tx = yield* Transactor
          // "late" begins first (and reads M) but patches and commits after "early". (The embedded
          // database runs one transaction at a time: there "early" waits, and commits last.)
          const committed: Array<string> = []
          const begun = yield* Deferred.make<void>()
          const go = yield* Deferred.make<void>()
          const late = yield* Effect.forkChild(tx.withTransaction(Effect.gen(function*() {
            yield* members.get(tenant.id, m.id)
            yield* Deferred.succeed(begun, undefined)
            yield* Deferred.await(go).pipe(Effect.timeoutOption(1_000))
            yield* members.update(tenant.id, m.id, { name: "late" })
          })).pipe(Effect.andThen(Effect.sync(() => committed.push("late")))))
          yield* Deferred.await(begun)
          const early = yield* Effect.forkChild(members.update(tenant.id, m.id, { name: "early" }).pipe(
            Effect.andThen(Effect.sync(() => committed.push("early"))),
            Effect.ensuring(Deferred.succeed(go, undefined))
          ))
          yield* Fiber.join(late)
          yield* Fiber.join(early)
          if (rt.name === "postgres") assert.deepStrictEqual(committed, ["early", "late"])
          assert.deepStrictEqual(yield* drain(tenant.id, m), ["created", ...committed])
        }))

      it.effect("a replayed delivery goes before the later ones of its resource still waiting, after the one in flight: nothing waits for ever", () =>
        Effect.gen(function*() {
          const { tenant, m } = yield* orderedChamber(1)
          const store = yield* DeliveryStore
          const admin = yield* WebhookAdmin
          const ofM = (ds: ReadonlyArray<ClaimedDelivery>) => ds.filter((d) => nameOf(d) !== "other")
          const [created] = ofM(mine(tenant.id)(yield* claimOf("r", 1_000)))
          yield* store.record("r", [outcome(created!, 200)], now)
          const [one] = ofM(mine(tenant.id)(yield* claimOf("r", 1_000)))
          assert.strictEqual(nameOf(one!), "one")
          // While "one" is in flight, the created is replayed: it waits for "one", then goes before "two".
          assert.deepStrictEqual(yield* admin.replay([created!.id]), [created!.id])
          assert.lengthOf(ofM(mine(tenant.id)(yield* claimOf("r", 1_000))), 0)
          yield* store.record("r", [outcome(one!, 200)], now)
          const again = ofM(mine(tenant.id)(yield* claimOf("r", 1_000)))
          assert.deepStrictEqual(again.map((d) => [d.id, nameOf(d)]), [[created!.id, "created"]])
          yield* store.record("r", [outcome(again[0]!, 200)], now)
          assert.deepStrictEqual(yield* drain(tenant.id, m, "r"), ["two"])
        }))

      it.effect("a patch queued behind a replayed delivery, while a later one of its resource waits free, goes last: nothing waits for ever", () =>
        Effect.gen(function*() {
          const { tenant, members, m } = yield* memberCreated
          const store = yield* DeliveryStore
          const [created] = mine(tenant.id)(yield* claimOf("f", 1_000))
          yield* store.record("f", [outcome(created!, 200)], now)
          yield* members.update(tenant.id, m.id, { name: "one" })
          // The created goes again while "one" waits, free; "two" is queued behind the first of them.
          yield* (yield* WebhookAdmin).replay([created!.id])
          yield* members.update(tenant.id, m.id, { name: "two" })
          assert.deepStrictEqual(yield* drain(tenant.id, m, "f"), ["created", "one", "two"])
        }))

      it.effect("with statistics taken during a backlog, a claim and a write read a few rows per subscription, not the backlog", () =>
        Effect.gen(function*() {
          // 300 deliveries waiting for each of 20 subscriptions, each about a resource of its own,
          // and statistics that know it (as autovacuum's ANALYZE soon does in production).
          const { tenant, hooks } = yield* chamberWithDeliveries(0, 20)
          const sql = yield* SqlClient.SqlClient
          yield* sql`
            WITH e AS (
              INSERT INTO outbox_events (event_id, tenant_id, type, payload)
              SELECT 'evt_backlog_' || ${tenant.id} || '_' || g, ${tenant.id}, 'member.created', jsonb_build_object('id', g)
              FROM generate_series(1, 300) g RETURNING id, payload
            )
            INSERT INTO webhook_deliveries (tenant_id, event_id, hook_id, resource)
            SELECT ${tenant.id}, e.id, h, 'members/' || (e.payload ->> 'id') FROM e CROSS JOIN unnest(${`{${hooks.map((h) => h.id).join(",")}}`}::bigint[]) h`.pipe(Effect.orDie)
          yield* settleOtherChambers(tenant.id)
          yield* sql`ANALYZE webhook_deliveries`.pipe(Effect.orDie)
          // Rows and index entries of webhook_deliveries read so far in this transaction.
          const read = sql<{ readonly n: string }>`
            SELECT sum(pg_stat_get_xact_tuples_returned(oid) + pg_stat_get_xact_tuples_fetched(oid))::text AS n FROM pg_class
            WHERE oid = 'webhook_deliveries'::regclass OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'webhook_deliveries'::regclass)`.pipe(
            Effect.map((rows) => Number(rows[0]!.n)),
            Effect.orDie
          )
          yield* Effect.gen(function*() {
            const store = yield* DeliveryStore
            const [claimRead, writeRead, claimed] = yield* sql.withTransaction(Effect.gen(function*() {
              const before = yield* read
              const claimed = mine(tenant.id)(yield* claimOf("backlog", 8, 4))
              const claimedAt = yield* read
              yield* store.record("backlog", claimed.map((d) => outcome(d, 200)), now)
              return [claimedAt - before, (yield* read) - claimedAt, claimed] as const
            })).pipe(Effect.orDie)
            assert.lengthOf(claimed, 8)
            // A few dozen a subscription (a plan chosen with other statistics reads up to about 50),
            // where reading the backlog is 6,000 and more.
            assert.isBelow(claimRead, 80 * hooks.length, "rows the claim read")
            assert.isBelow(writeRead, 200, "rows the write read")
          }).pipe(
            // The backlog is not the next tests' to deliver.
            Effect.ensuring(sql`DELETE FROM webhook_deliveries WHERE tenant_id = ${tenant.id}`.pipe(Effect.orDie))
          )
        }))

      it.effect("chambers are claimed in turn, not by due time: another chamber's one delivery goes in the first claim after a backlog of 50", () =>
        Effect.gen(function*() {
          const busy = yield* chamberWithDeliveries(5, 10)
          const quiet = yield* chamberWithDeliveries(1)
          yield* onlyChambers([busy.tenant.id, quiet.tenant.id])
          const first = yield* claimOf("turns", 4, 4)
          assert.lengthOf(mine(quiet.tenant.id)(first), 1)
          assert.lengthOf(mine(busy.tenant.id)(first), 3)
          // Within the busy chamber, its subscriptions in turn too: three claimed, of three subscriptions.
          assert.strictEqual(new Set(mine(busy.tenant.id)(first).map((d) => d.hookId)).size, 3)
          yield* settleChambers([busy.tenant.id, quiet.tenant.id])
        }))

      it.effect("a chamber's sends in flight in the relay count against its share: a claim leases it only what is left, and says it left some", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithDeliveries(5, 4)
          yield* onlyChambers([tenant.id])
          const store = yield* DeliveryStore
          const claim = (relayId: string, sending: number) =>
            store.claim({ relayId, limit: 100, leaseMs: 60_000, perSubscription: 4, perChamber: 6, sending: new Map([[tenant.id, sending]]) })
          const some = yield* claim("share-a", 2)
          assert.lengthOf(some.deliveries, 4)
          assert.isTrue(some.capped)
          const none = yield* claim("share-b", 6)
          assert.lengthOf(none.deliveries, 0)
          assert.isTrue(none.capped)
          // Another relay's sends are its own: this one gives the chamber its whole share.
          assert.lengthOf((yield* claim("share-c", 0)).deliveries, 6)
          yield* settleChambers([tenant.id])
        }))

      it.effect("a receiver whose last 3 attempts timed out gets one send at a time across its subscriptions, re-posting their URLs changes nothing, and a success gives them their places back", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithDeliveries(0, 0)
          const hooks = yield* Hooks
          const slow = yield* Effect.forEach(["a", "b", "c"], (p) =>
            Effect.orDie(hooks.create(tenant.id, { url: `https://Slow.example.com:443/${n}/${p}`, events: ["member.created"] })))
          yield* Effect.orDie(hooks.create(tenant.id, { url: `https://fine.example.com/${n}`, events: ["member.created"] }))
          for (let i = 0; i < 6; i++) yield* Effect.orDie((yield* Members).create(tenant.id, { name: `Member ${i}`, status: "active" }))
          yield* onlyChambers([tenant.id])
          const store = yield* DeliveryStore
          const isSlow = (d: ClaimedDelivery) => d.url.includes("Slow.example.com")
          const timedOut = (d: ClaimedDelivery): AttemptOutcome => ({ ...outcome(d, 0), ok: false, status: null, error: "did not answer", timedOut: true })
          const first = yield* claimOf("breaker", 100, 4)
          assert.lengthOf(first.filter(isSlow), 12)
          yield* store.record("breaker", first.map((d) => (isSlow(d) ? timedOut(d) : outcome(d, 200))), now)
          const sql = yield* SqlClient.SqlClient
          const receivers = () =>
            sql<{ readonly origin: string; readonly timeouts: number }>`SELECT origin, timeouts FROM webhook_receivers WHERE tenant_id = ${tenant.id}`.pipe(Effect.orDie)
          assert.deepStrictEqual(yield* receivers(), [{ origin: "slow.example.com", timeouts: 12 }])
          // One probe, while the other receiver has all its places.
          const probe = yield* claimOf("breaker", 100, 4)
          assert.lengthOf(probe.filter(isSlow), 1)
          assert.lengthOf(probe.filter((d) => !isSlow(d)), 2)
          assert.lengthOf((yield* claimOf("breaker-2", 100, 4)).filter(isSlow), 0, "one at a time across relays")
          yield* store.record("breaker", probe.filter(isSlow).map(timedOut), now)
          // Deactivated, then their URLs posted again: reactivated, still one at a time.
          yield* sql`UPDATE webhook_subscriptions SET active = false WHERE id IN ${sql.in(slow.map((h) => h.id))}`.pipe(Effect.orDie)
          for (const h of slow) yield* Effect.orDie(hooks.create(tenant.id, { url: h.url, events: ["member.created"] }))
          const again = (yield* claimOf("breaker", 100, 4)).filter(isSlow)
          assert.lengthOf(again, 1)
          assert.deepStrictEqual(yield* receivers(), [{ origin: "slow.example.com", timeouts: 13 }])
          // It answers: its row goes, and every subscription has its places again.
          yield* store.record("breaker", again.map((d) => outcome(d, 200)), now)
          assert.deepStrictEqual(yield* receivers(), [])
          const back = (yield* claimOf("breaker", 100, 4)).filter(isSlow)
          assert.strictEqual(new Set(back.map((d) => d.hookId)).size, 3)
          assert.isAtLeast(back.length, 10)
          yield* settleChambers([tenant.id])
        }))

      it.effect.skipIf(rt.name !== "postgres")("the leases of a relay whose lock is free count as expired at once; a relay without its lock claims nothing", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithDeliveries(6)
          yield* onlyChambers([tenant.id])
          const store = yield* DeliveryStore
          const scope = yield* Scope.make()
          yield* Scope.provide(store.hold("held-relay"), scope)
          assert.lengthOf(yield* claimOf("held-relay", 100, 4), 4)
          // Alive: its leases hold the subscription's 4 places for the minute they last.
          assert.lengthOf(yield* claimOf("other-relay", 100, 4), 0)
          // Its lock is given back without its leases (as when its process dies).
          yield* Scope.close(scope, Exit.void)
          assert.lengthOf(yield* claimOf("held-relay", 100, 4), 0, "without its lock it claims nothing")
          const taken = yield* claimOf("other-relay", 100, 4)
          assert.lengthOf(taken, 4)
          // Stopped gracefully, its row goes; a dead relay's row goes at the next prune once it holds no live lease.
          const sql = yield* SqlClient.SqlClient
          yield* store.prune(86_400_000, 1_000)
          const rows = yield* sql<{ readonly relay_id: string }>`SELECT relay_id FROM webhook_relays`.pipe(Effect.orDie)
          assert.deepStrictEqual(rows.map((r) => r.relay_id), [])
          yield* settleChambers([tenant.id])
        }))

      it.effect("a relay loop delivers every event once and, stopped, gives back what it still holds", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithDeliveries(30, 2)
          const seen: Array<number> = []
          const config = {
            relayId: "loop",
            concurrency: 8,
            perSubscription: 4,
            perChamber: 8,
            batchSize: 10,
            leaseMs: 60_000,
            pollMs: 50,
            flushMs: 20,
            stopTimeoutMs: 1_000,
            listen: false,
            retryDelayMs: now,
            retentionMs: 86_400_000,
            pruneEveryMs: 60_000
          }
          const relay = yield* Effect.forkChild(runRelay(config, (d) =>
            Effect.sync(() => {
              if (d.tenantId === tenant.id) seen.push(d.id)
              return outcome(d, 200)
            })))
          for (let i = 0; i < 100 && seen.length < 60; i++) yield* Effect.sleep(50)
          yield* Effect.sleep(100)
          yield* Fiber.interrupt(relay)
          assert.lengthOf(seen, 60)
          assert.strictEqual(new Set(seen).size, 60)
          const rows = yield* deliveryRows(tenant.id)
          assert.isTrue(rows.every((r) => r.status === "succeeded" && r.attempts === "1"), JSON.stringify(rows.slice(0, 3)))

          // A relay stopped while holding leases gives them back.
          const more = yield* chamberWithDeliveries(3)
          const held = mine(more.tenant.id)(yield* claimOf("quitter"))
          assert.lengthOf(held, 3)
          assert.strictEqual(yield* (yield* DeliveryStore).release("quitter"), 3)
          assert.lengthOf(mine(more.tenant.id)(yield* claimOf("next")), 3)
        }))
    })
  })
}
