/**
 * The change feed, GET /api/v1/changes (docs/api.md "Change feed", ruling 29), over HTTP on a
 * real socket, on every storage runtime: commit order without gaps while writers that began
 * earlier commit later, paging, `after=head`, scopes by kind, isolation, retention and the 422s.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import { Changes, Contacts, Hooks, Importer, Members, Outbox, Transactor } from "@chamber/core"
import { StorageLive } from "@chamber/pg-adapter"
import { onDatabase, type Runtime, runtimes } from "@chamber/pg-adapter/testing"
import { HttpLive, NodeServerTest } from "../src/index.ts"
import { anotherKey, call, chamberWithKey, publicPings, rateLimitsAt, SUITE_PER_MINUTE } from "./fixture.ts"

const WRITERS = 20

/** The server over a pool wide enough for 20 transactions held open at once, plus the reader's requests. */
const wideServerOn = (rt: Runtime) =>
  HttpLive.pipe(
    Layer.provideMerge(NodeServerTest),
    Layer.provideMerge(publicPings),
    Layer.provideMerge(onDatabase(rt, (config) => StorageLive(config._tag === "Postgres" ? { ...config, maxConnections: WRITERS + 8 } : config))),
    Layer.provide(rateLimitsAt(SUITE_PER_MINUTE)),
    Layer.provide(Layer.succeed(References.MinimumLogLevel)("Warn"))
  )

/** A pause on the real clock (the suite's effects run with the test clock). */
const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const feed = (key: string, query = "") => call("GET", `/api/v1/changes${query === "" ? "" : `?${query}`}`, { key })

/** Every event after `cursor`, following next_cursor until has_more is false. */
const readAll = (key: string, cursor?: string) =>
  Effect.gen(function*() {
    const events: Array<any> = []
    let after = cursor
    for (;;) {
      const reply = yield* feed(key, after === undefined ? "" : `after=${after}`)
      assert.strictEqual(reply.status, 200, reply.text)
      events.push(...reply.body.data)
      after = reply.body.meta.next_cursor
      if (!reply.body.meta.has_more) return { events, cursor: after! }
    }
  })

for (const rt of runtimes()) {
  describe(`the change feed on ${rt.name}`, () => {
    layer(wideServerOn(rt), { timeout: 180_000 })((it) => {
      it.effect("20 writers committing in another order than they began: a reader following next_cursor sees every event once, in commit order", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("members:read")
          const members = yield* Members
          const tx = yield* Transactor
          const release = Array.from({ length: WRITERS }, () => Deferred.makeUnsafe<void>())
          const outbox = yield* Outbox
          // Each writer's transaction fires its events, tells which (in the order they began),
          // then stays open until it is released. Every third writer fires two events.
          const began = new Map<number, ReadonlyArray<string>>()
          const failures: Array<string> = []
          const writer = (i: number) =>
            tx.withTransaction(Effect.gen(function*() {
              const created = yield* members.create(tenant.id, { name: `Writer ${i}`, status: "active" }).pipe(Effect.orDie)
              if (i % 3 === 0) yield* members.update(tenant.id, created.id, { city: `Town ${i}` }).pipe(Effect.orDie)
              const mine = (yield* outbox.list(tenant.id)).filter((e) => (e.data as { id: number }).id === created.id).map((e) => e.id)
              began.set(i, mine)
              yield* Deferred.await(release[i]!)
            })).pipe(Effect.tapCause((cause) => Effect.sync(() => failures.push(`writer ${i}: ${cause}`))), Effect.ignore)
          // The reader polls throughout, following next_cursor.
          const seen: Array<string> = []
          let polls = 0
          let done = false
          let refused: string | undefined
          const reader = Effect.gen(function*() {
            let after: string | undefined
            while (!done) {
              const reply = yield* feed(key, after === undefined ? "" : `after=${after}`)
              if (reply.status !== 200) {
                refused = `${reply.status} ${reply.text}`
                return
              }
              seen.push(...reply.body.data.map((e: any) => e.id))
              after = reply.body.meta.next_cursor
              polls++
              if (!reply.body.meta.has_more) yield* pause(5)
            }
            return after
          })
          const readerFiber = yield* Effect.forkChild(reader)
          const writers = yield* Effect.forEach(Array.from({ length: WRITERS }, (_, i) => i), (i) => Effect.forkChild(writer(i)))
          // Released in an order unlike the one they began in: odd ones last to first, then even ones.
          const order = [...Array.from({ length: WRITERS }, (_, i) => i).filter((i) => i % 2 === 1).reverse(), ...Array.from({ length: WRITERS }, (_, i) => i).filter((i) => i % 2 === 0)]
          const expected: Array<string> = []
          const pollsSince = (n: number) => Effect.gen(function*() {
            while (polls < n + 2 && refused === undefined) yield* pause(2)
          })
          // Whenever no writer has begun for a moment, the first of `order` that has is committed.
          // On PostgreSQL most are open at once (some wait for another's row: the member counts);
          // on the embedded database a transaction holds the one session until it ends, so they
          // commit in the order they get it, each held open while the reader's requests wait.
          const committed = new Set<number>()
          while (committed.size < WRITERS && failures.length === 0) {
            let seenBegun = -1
            while ((began.size === committed.size || seenBegun !== began.size) && failures.length === 0) {
              seenBegun = began.size
              yield* pause(150)
            }
            const i = order.find((w) => began.has(w) && !committed.has(w))
            if (i === undefined) continue
            yield* Deferred.succeed(release[i]!, undefined)
            yield* Fiber.join(writers[i]!)
            committed.add(i)
            expected.push(...began.get(i)!)
            // The reader reads between commits (on PostgreSQL; the embedded one lets it in when it can).
            if (rt.name === "postgres") yield* pollsSince(polls)
          }
          assert.deepStrictEqual(failures, [])
          if (rt.name === "postgres") assert.notDeepEqual(expected, [...began.values()].flat(), "commit order differs from begin order")
          yield* pollsSince(polls)
          done = true
          yield* Fiber.join(readerFiber)
          assert.isUndefined(refused, "every poll answered")
          assert.strictEqual(expected.length, WRITERS + Math.ceil(WRITERS / 3))
          assert.deepStrictEqual(seen, expected, "every event once, in commit order")
        }), { timeout: 150_000 })

      it.effect("pages of 100 across 205 events, oldest first, each exactly as a delivery carries it; next_cursor polls newer ones", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("members:read")
          const members = yield* Members
          // One import: quick, so the client's idle connection is still alive when the reads begin.
          yield* (yield* Importer).run(tenant.id, { members: Array.from({ length: 205 }, (_, i) => ({ name: `Member ${i}`, status: "active" })) }).pipe(Effect.orDie)
          const first = yield* feed(key)
          assert.deepStrictEqual([first.status, first.body.data.length, first.body.meta.has_more], [200, 100, true])
          const all = yield* readAll(key)
          const stored = (yield* (yield* Outbox).list(tenant.id)).map(({ created_at, data, id, type }) => ({ id, type, created_at, data }))
          assert.deepStrictEqual(all.events, stored)
          assert.strictEqual(all.events.length, 205)
          assert.deepStrictEqual(Object.keys(all.events[0]), ["id", "type", "created_at", "data"])
          const one = yield* call("GET", `/api/v1/members/${all.events[5].data.id}`, { key })
          assert.deepStrictEqual(all.events[5].data, one.body.data, "data is the resource as GET returns it")
          // Polling the last cursor: nothing, then what came since.
          const idle = yield* feed(key, `after=${all.cursor}`)
          assert.deepStrictEqual([idle.body.data, idle.body.meta], [[], { next_cursor: all.cursor, has_more: false }])
          const later = yield* members.create(tenant.id, { name: "Later", status: "active" }).pipe(Effect.orDie)
          const next = yield* feed(key, `after=${all.cursor}`)
          assert.deepStrictEqual(next.body.data.map((e: any) => [e.type, e.data.id]), [["member.created", later.id]])
        }))

      it.effect("after=head: no events and the newest's cursor, from which only later events come; an empty chamber's feed starts empty", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("members:read")
          const empty = yield* feed(key)
          assert.deepStrictEqual([empty.status, empty.body.data, empty.body.meta.has_more], [200, [], false])
          assert.isString(empty.body.meta.next_cursor)
          const members = yield* Members
          yield* members.create(tenant.id, { name: "Before", status: "active" }).pipe(Effect.orDie)
          const head = yield* feed(key, "after=head")
          assert.deepStrictEqual([head.status, head.body.data, head.body.meta.has_more], [200, [], false])
          const after = yield* members.create(tenant.id, { name: "After", status: "active" }).pipe(Effect.orDie)
          const next = yield* feed(key, `after=${head.body.meta.next_cursor}`)
          assert.deepStrictEqual(next.body.data.map((e: any) => e.data.id), [after.id])
          // The empty chamber's first cursor reads both.
          const fromStart = yield* feed(key, `after=${empty.body.meta.next_cursor}`)
          assert.deepStrictEqual(fromStart.body.data.map((e: any) => e.data.attributes.name), ["Before", "After"])
        }))

      it.effect("scopes: only kinds the key may read; types naming another is a 403 naming its scope; a key that reads none, 403 naming members:read", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithKey("all")
          const t = tenant.id
          yield* (yield* Importer).run(t, {
            members: [{ ref: "m", name: "Acme", status: "active" }],
            contacts: [{ first_name: "Ann", last_name: "Lee" }],
            invoices: [{ member_ref: "m", lines: [{ description: "Dues", unit: "10.00" }], status: "open" }]
          }).pipe(Effect.orDie)
          const kindsFor = (scopes: string, query = "") =>
            Effect.gen(function*() {
              const reply = yield* feed(yield* anotherKey(t, scopes), query)
              assert.strictEqual(reply.status, 200, reply.text)
              return reply.body.data.map((e: any) => e.type)
            })
          assert.deepStrictEqual(yield* kindsFor("contacts:read"), ["contact.created"])
          assert.deepStrictEqual(yield* kindsFor("members:read,invoices:read"), ["member.created", "invoice.created", "invoice.updated", "invoice.issued"])
          assert.deepStrictEqual(yield* kindsFor("all", "types=invoice.issued,contact.created"), ["contact.created", "invoice.issued"])
          // Ruling 34: repeated `types=` as well as comma-separated, and both at once.
          assert.deepStrictEqual(yield* kindsFor("all", "types=invoice.issued&types=contact.created"), ["contact.created", "invoice.issued"])
          assert.deepStrictEqual(yield* kindsFor("all", "types=invoice.issued,member.created&types=contact.created"), ["member.created", "contact.created", "invoice.issued"])
          const contactsOnly = yield* anotherKey(t, "contacts:read")
          const refused = yield* feed(contactsOnly, "types=contact.created,member.updated")
          assert.deepStrictEqual([refused.status, refused.body], [403, { message: "This key lacks the members:read scope." }])
          const dealsRefused = yield* feed(contactsOnly, "types=deal.approved")
          assert.deepStrictEqual([dealsRefused.status, dealsRefused.body], [403, { message: "This key lacks the deals:read scope." }])
          const none = yield* feed(yield* anotherKey(t, "hooks:write,members:write,events:write"))
          assert.deepStrictEqual([none.status, none.body], [403, { message: "This key lacks the members:read scope." }])
        }))

      it.effect("another chamber's events never appear, whatever cursor is sent", () =>
        Effect.gen(function*() {
          const a = yield* chamberWithKey("all")
          const b = yield* chamberWithKey("all")
          const members = yield* Members
          yield* members.create(a.tenant.id, { name: "Mine", status: "active" }).pipe(Effect.orDie)
          const start = yield* feed(a.key)
          yield* members.create(b.tenant.id, { name: "Theirs", status: "active" }).pipe(Effect.orDie)
          const theirs = yield* feed(b.key)
          yield* members.create(a.tenant.id, { name: "Mine again", status: "active" }).pipe(Effect.orDie)
          const mine = yield* readAll(a.key)
          assert.deepStrictEqual(mine.events.map((e: any) => e.data.attributes.name), ["Mine", "Mine again"])
          const withTheirCursor = yield* readAll(a.key, start.body.meta.next_cursor)
          assert.deepStrictEqual(withTheirCursor.events.map((e: any) => e.data.attributes.name), ["Mine again"])
          // A's cursor is past B's newest position (A has two events, B one): refused, never read as B's.
          const otherWay = yield* feed(b.key, `after=${mine.cursor}`)
          assert.deepStrictEqual([otherWay.status, Object.keys(otherWay.body.errors ?? {})], [422, ["after"]], otherWay.text)
          assert.deepStrictEqual(theirs.body.data.map((e: any) => e.data.attributes.name), ["Theirs"])
        }))

      it.effect("a chamber's cursors say nothing of another's writes: the same steps give the same cursors whether or not another chamber wrote between them; a v1 cursor still reads", () =>
        Effect.gen(function*() {
          const members = yield* Members
          const other = yield* chamberWithKey("all")
          // The same steps in two chambers; between each of the first's, the other chamber writes.
          const steps = <R>(chamber: { readonly key: string; readonly tenant: { readonly id: number } }, between: Effect.Effect<void, never, R>) =>
            Effect.gen(function*() {
              const empty = (yield* feed(chamber.key)).body.meta.next_cursor
              yield* between
              yield* members.create(chamber.tenant.id, { name: "One", status: "active" }).pipe(Effect.orDie)
              const first = yield* readAll(chamber.key)
              yield* between
              const head = (yield* feed(chamber.key, "after=head")).body.meta.next_cursor
              yield* members.create(chamber.tenant.id, { name: "Two", status: "active" }).pipe(Effect.orDie)
              yield* between
              const second = yield* readAll(chamber.key, first.cursor)
              assert.deepStrictEqual(second.events.map((e: any) => e.data.attributes.name), ["Two"])
              return [empty, first.cursor, head, second.cursor]
            })
          const busy = Effect.asVoid((yield* Importer).run(other.tenant.id, {
            members: Array.from({ length: 7 }, (_, i) => ({ name: `Theirs ${i}`, status: "active" }))
          }).pipe(Effect.orDie, Effect.andThen(feed(other.key))))
          const a = yield* chamberWithKey("all")
          const quiet = yield* chamberWithKey("all")
          const seen = yield* steps(a, Effect.andThen(busy, busy))
          assert.deepStrictEqual(seen, yield* steps(quiet, Effect.void))
          assert.strictEqual((yield* readAll(other.key)).events.length, 42)
          // A cursor of the form given before positions were each chamber's own names the same place.
          const v1 = Buffer.from("v1.1").toString("base64url")
          const fromV1 = yield* readAll(a.key, v1)
          assert.deepStrictEqual([fromV1.events.map((e: any) => e.data.attributes.name), fromV1.cursor], [["Two"], seen[3]])
        }))

      it.effect("past retention: a cursor older than the events kept is a 410; reading from the oldest kept and after=head go on; an event a pending delivery needs stays for it", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("all")
          const t = tenant.id
          const members = yield* Members
          const start = yield* feed(key)
          yield* members.create(t, { name: "Old", status: "active" }).pipe(Effect.orDie)
          const middle = (yield* readAll(key)).cursor
          yield* (yield* Hooks).create(t, { url: "https://hooks.example.com/in", events: ["contact.created"] }).pipe(Effect.orDie)
          yield* (yield* Contacts).create(t, { first_name: "Pending", last_name: "Delivery" }).pipe(Effect.orDie)
          yield* members.create(t, { name: "Also old", status: "active" }).pipe(Effect.orDie)
          const current = (yield* readAll(key)).cursor
          // Everything so far is past retention.
          const pruned = yield* (yield* Changes).prune(new Date(Date.now() + 60_000))
          assert.isAtLeast(pruned, 2)
          for (const cursor of [start.body.meta.next_cursor, middle]) {
            const gone = yield* feed(key, `after=${cursor}`)
            assert.strictEqual(gone.status, 410, gone.text)
            assert.deepStrictEqual(Object.keys(gone.body), ["message"])
          }
          // The newest cursor missed nothing.
          const fine = yield* feed(key, `after=${current}`)
          assert.deepStrictEqual([fine.status, fine.body.data], [200, []])
          // The contact's delivery is still pending: its event stays for the relay, not for the feed,
          // which keeps only what follows the newest event pruned.
          assert.deepStrictEqual((yield* (yield* Outbox).list(t)).map((e) => e.type), ["contact.created"])
          const kept = yield* readAll(key)
          assert.deepStrictEqual(kept.events, [])
          const head = yield* feed(key, "after=head")
          const fresh = yield* members.create(t, { name: "New", status: "active" }).pipe(Effect.orDie)
          for (const cursor of [head.body.meta.next_cursor, kept.cursor]) {
            const next = yield* feed(key, `after=${cursor}`)
            assert.deepStrictEqual(next.body.data.map((e: any) => e.data.id), [fresh.id])
          }
        }))

      it.effect("a cursor past the newest position the chamber's feed gave out is a 422 on after, in v2 and v1 form; the head's own cursor and after=head stay valid", () =>
        Effect.gen(function*() {
          const { key, tenant } = yield* chamberWithKey("all")
          const members = yield* Members
          const cursorOf = (version: string, position: number | bigint) => Buffer.from(`${version}.${position}`).toString("base64url")
          const refused = (cursor: string, query = "") =>
            Effect.gen(function*() {
              const reply = yield* feed(key, `after=${cursor}${query}`)
              assert.deepStrictEqual([reply.status, Object.keys(reply.body.errors ?? {})], [422, ["after"]], `after=${cursor}: ${reply.text}`)
              assert.deepStrictEqual(Object.keys(reply.body), ["message", "errors"])
              assert.match(reply.body.errors.after[0], /past the newest event/)
            })
          // An empty chamber has given out nothing: its head is 0.
          const empty = yield* feed(key)
          assert.strictEqual(empty.body.meta.next_cursor, cursorOf("v2", 0))
          yield* refused(cursorOf("v2", 1))
          yield* members.create(tenant.id, { name: "One", status: "active" }).pipe(Effect.orDie)
          yield* members.create(tenant.id, { name: "Two", status: "active" }).pipe(Effect.orDie)
          const head = (yield* feed(key, "after=head")).body.meta.next_cursor
          assert.strictEqual(head, cursorOf("v2", 2))
          // The issue's own example (v1.99999), a cursor one past the head, and the largest position.
          for (const cursor of ["djEuOTk5OTk", cursorOf("v2", 3), cursorOf("v1", 3), cursorOf("v2", 99999), cursorOf("v2", 2n ** 63n - 1n)]) {
            yield* refused(cursor)
          }
          // Past the head with only some kinds asked is still refused; at the head, with kinds that have no events, valid.
          yield* refused(cursorOf("v2", 3), "&types=contact.created")
          for (const cursor of [head, cursorOf("v1", 2)]) {
            for (const query of ["", "&types=contact.created"]) {
              const reply = yield* feed(key, `after=${cursor}${query}`)
              assert.deepStrictEqual([reply.status, reply.body.data, reply.body.meta], [200, [], { next_cursor: head, has_more: false }], `after=${cursor}${query}: ${reply.text}`)
            }
          }
          // A v1 cursor before the head reads on; once the chamber has given a position out, its cursor is valid.
          const fromV1 = yield* feed(key, `after=${cursorOf("v1", 1)}`)
          assert.deepStrictEqual([fromV1.status, fromV1.body.data.map((e: any) => e.data.attributes.name)], [200, ["Two"]], fromV1.text)
          const three = yield* members.create(tenant.id, { name: "Three", status: "active" }).pipe(Effect.orDie)
          const nowHead = yield* feed(key, `after=${cursorOf("v2", 3)}`)
          assert.deepStrictEqual([nowHead.status, nowHead.body.data], [200, []], nowHead.text)
          assert.deepStrictEqual((yield* feed(key, `after=${head}`)).body.data.map((e: any) => e.data.id), [three.id])
          yield* refused(cursorOf("v2", 4))
        }))

      it.effect("422 on types for an unknown kind, 422 on after for a malformed cursor", () =>
        Effect.gen(function*() {
          const { key } = yield* chamberWithKey("all")
          const unknown = yield* feed(key, "types=member.created,member.deleted")
          assert.deepStrictEqual([unknown.status, Object.keys(unknown.body.errors)], [422, ["types"]], unknown.text)
          for (const bad of ["nope", "djEuLTE", "djMuMQ", "1", "", "head2", "djEuMDE", "djIuMDE", "djIuLTE"]) {
            const reply = yield* feed(key, `after=${bad}`)
            assert.deepStrictEqual([reply.status, Object.keys(reply.body.errors ?? {})], [422, ["after"]], `after=${bad}: ${reply.text}`)
          }
        }))
    })
  })
}
