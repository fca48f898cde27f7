/**
 * Members lists as migration 0011 keeps them (docs/api.md "Lists, paging, sorting"), on embedded
 * PGlite and on PostgreSQL: totals stay exact through creates (concurrent ones too), status
 * changes and deletes, chamber by chamber; every page of every order and filter, read forward
 * or from the end, is the slice of the whole order; a name search finds exactly what ILIKE finds;
 * the migration counts and names the members that were there before it.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { MemberRepo, Members, MemberStatuses, PER_PAGE, Tenants } from "@chamber/core"
import { DatabaseLive, MemberRepoSql, migrate, StorageLive } from "../src/index.ts"
import { likeEscape } from "../src/repos/rows.ts"
import { migrateBefore, onDatabase, runtimes } from "./harness.ts"

const tenant = (label: string) =>
  Effect.gen(function*() {
    return (yield* (yield* Tenants).create({ name: `${label} ${Math.random()}` })).id
  })

/** The true counts: by status, from the members themselves. */
const trueCounts = (tenantId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly status: string; readonly n: number }>`
      SELECT status, count(*)::int AS n FROM members WHERE tenant_id = ${tenantId} GROUP BY status`
    return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Record<string, number>
  }).pipe(Effect.orDie)

/** What the lists say: the whole list's total and each status's. */
const listedCounts = (tenantId: number) =>
  Effect.gen(function*() {
    const repo = yield* MemberRepo
    const all = (yield* repo.list(tenantId, {}, undefined, 1)).total
    const byStatus: Record<string, number> = {}
    for (const status of MemberStatuses) {
      const total = (yield* repo.list(tenantId, { status }, undefined, 1)).total
      if (total > 0) byStatus[status] = total
    }
    return { all, byStatus }
  })

const assertCountsTrue = (tenantId: number, label: string) =>
  Effect.gen(function*() {
    const truth = yield* trueCounts(tenantId)
    const listed = yield* listedCounts(tenantId)
    assert.deepStrictEqual(listed.byStatus, truth, `${label}: by status`)
    assert.strictEqual(listed.all, Object.values(truth).reduce((a, b) => a + b, 0), `${label}: all`)
  })

/** Every member's kept rows against the members: counts by chamber and status, names, times. */
const assertKeptRowsTrue = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const counts = yield* sql`
    SELECT coalesce(k.tenant_id, m.tenant_id) AS tenant_id, coalesce(k.status, m.status) AS status, k.n AS kept, m.n AS counted
    FROM (SELECT tenant_id, status, sum(members)::int AS n FROM member_counts GROUP BY tenant_id, status HAVING sum(members) <> 0) k
    FULL JOIN (SELECT tenant_id, status, count(*)::int AS n FROM members GROUP BY tenant_id, status) m
      ON m.tenant_id = k.tenant_id AND m.status = k.status
    WHERE k.n IS DISTINCT FROM m.n`
  assert.deepStrictEqual(counts, [])
  const names = yield* sql`
    (SELECT tenant_id, id, lower(name) AS key, created_at FROM members
     EXCEPT SELECT tenant_id, member_id, name_key, created_at FROM member_names)
    UNION ALL
    (SELECT tenant_id, member_id, name_key, created_at FROM member_names
     EXCEPT SELECT tenant_id, id, lower(name), created_at FROM members)`
  assert.deepStrictEqual(names, [])
}).pipe(Effect.orDie)

type Sort = { readonly column: "name" | "created_at"; readonly descending: boolean } | undefined

const SORTS: ReadonlyArray<readonly [string, Sort, string]> = [
  ["default", undefined, `lower(name) COLLATE "C", id`],
  ["name", { column: "name", descending: false }, `lower(name) COLLATE "C", id`],
  ["-name", { column: "name", descending: true }, `lower(name) COLLATE "C" DESC, id DESC`],
  ["created_at", { column: "created_at", descending: false }, `created_at, id`],
  ["-created_at", { column: "created_at", descending: true }, `created_at DESC, id DESC`]
]

/** The ids of the whole list in an order, as the members table says. */
const wholeOrder = (tenantId: number, where: { readonly status?: string; readonly name?: string }, orderBy: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const clauses = [sql`tenant_id = ${tenantId}`]
    if (where.status !== undefined) clauses.push(sql`status = ${where.status}`)
    if (where.name !== undefined) clauses.push(sql`name ILIKE ${"%" + likeEscape(where.name) + "%"}`)
    const rows = yield* sql<{ readonly id: bigint | number }>`SELECT id FROM members WHERE ${sql.and(clauses)} ORDER BY ${sql.literal(orderBy)}`
    return rows.map((r) => Number(r.id))
  }).pipe(Effect.orDie)

/** Every page of a list, one past the end included, against the slices of the whole order. */
const assertEveryPage = (tenantId: number, filter: { readonly status?: (typeof MemberStatuses)[number]; readonly name?: string }, label: string) =>
  Effect.gen(function*() {
    const repo = yield* MemberRepo
    for (const [name, sort, orderBy] of SORTS) {
      const expected = yield* wholeOrder(tenantId, filter, orderBy)
      const lastPage = Math.max(1, Math.ceil(expected.length / PER_PAGE))
      for (let page = 1; page <= lastPage + 1; page++) {
        const got = yield* repo.list(tenantId, filter, sort, page)
        assert.strictEqual(got.total, expected.length, `${label} sort ${name} page ${page}: total`)
        assert.deepStrictEqual(
          got.rows.map((m) => m.id),
          expected.slice((page - 1) * PER_PAGE, page * PER_PAGE),
          `${label} sort ${name} page ${page}`
        )
      }
    }
  })

for (const rt of runtimes()) {
  describe(`members lists on ${rt.name}`, () => {
    layer(onDatabase(rt, (config) => StorageLive(config)), { timeout: 180_000 })((it) => {
      it.effect("totals stay exact through creates, concurrent creates, status changes and deletes, chamber by chamber", () =>
        Effect.gen(function*() {
          const a = yield* tenant("A")
          const b = yield* tenant("B")
          const members = yield* Members
          const sql = yield* SqlClient.SqlClient
          yield* assertCountsTrue(a, "empty")
          const made = yield* Effect.forEach(
            Array.from({ length: 40 }, (_, i) => i),
            (i) => members.create(i % 5 === 0 ? b : a, { name: `Counted ${i}`, status: MemberStatuses[i % 4]! }),
            { concurrency: 8 }
          )
          yield* assertCountsTrue(a, "after concurrent creates")
          yield* assertCountsTrue(b, "the other chamber")
          const inA = made.filter((_, i) => i % 5 !== 0)
          for (const m of inA.slice(0, 10)) yield* members.update(a, m.id, { status: "former" })
          // A PATCH that changes nothing, and one that changes the name only, leave the counts.
          yield* members.update(a, inA[0]!.id, { status: "former" })
          yield* members.update(a, inA[11]!.id, { name: "Renamed" })
          yield* assertCountsTrue(a, "after status changes")
          // Members cannot be deleted through the API or the core; a database operator can.
          yield* sql`DELETE FROM members WHERE id IN ${sql.in(inA.slice(5, 15).map((m) => m.id))}`.pipe(Effect.orDie)
          yield* assertCountsTrue(a, "after deletes")
          yield* assertCountsTrue(b, "the other chamber, after deletes in A")
          const rolledBack = yield* sql.withTransaction(Effect.gen(function*() {
            yield* members.create(a, { name: "Rolled back", status: "active" })
            yield* members.update(a, inA[20]!.id, { status: "pending" })
            return yield* Effect.fail("undo" as const)
          })).pipe(Effect.flip)
          assert.strictEqual(rolledBack, "undo")
          yield* assertCountsTrue(a, "after a rolled-back create and status change")
          yield* assertKeptRowsTrue
        }))

      it.effect("every page of every order and filter, forward or from the end, is the slice of the whole order; past the end: none, the true total", () =>
        Effect.gen(function*() {
          const a = yield* tenant("Paged")
          const other = yield* tenant("Other")
          const members = yield* Members
          const sql = yield* SqlClient.SqlClient
          // 250 members: 37 names in mixed case (ties across page boundaries), four statuses, 61
          // creation minutes; another chamber's 120 members interleaved, never shown.
          for (let i = 0; i < 250; i++) {
            const name = `${i % 2 === 0 ? "row" : "ROW"} ${String((i * 7) % 37).padStart(2, "0")}`
            yield* members.create(a, { name, status: MemberStatuses[(i * 3) % 4]! })
            if (i % 2 === 0) yield* members.create(other, { name: `row ${i}`, status: "active" })
          }
          yield* sql`UPDATE members SET created_at = timestamptz '2024-01-01T00:00:00Z' + ((id * 13) % 61) * interval '1 minute'
                     WHERE tenant_id = ${a}`.pipe(Effect.orDie)
          yield* assertEveryPage(a, {}, "all")
          for (const status of MemberStatuses) yield* assertEveryPage(a, { status }, status)
          yield* assertEveryPage(a, { name: "ROW" }, "search row")
          yield* assertEveryPage(a, { name: "w 1" }, "search w 1")
          yield* assertEveryPage(a, { name: "nothing" }, "search nothing")
          const far = yield* (yield* MemberRepo).list(a, {}, { column: "name", descending: true }, 40)
          assert.deepStrictEqual([far.rows.length, far.total], [0, 250])
          yield* assertKeptRowsTrue
        }))

      it.effect("a name search finds exactly what ILIKE finds: case folding beyond ASCII, wildcards literal, renames followed", () =>
        Effect.gen(function*() {
          const a = yield* tenant("Search")
          const members = yield* Members
          const names = [
            "Ärzte Zentrum", "ÄRZTE zentrum", "Straße Bau", "STRASSE Bau", "İstanbul Kebab", "istanbul kebab", "ΣΟΦΙΑ Café",
            "σοφια café", "100% Pure", "1000 Pure", "a_b Corp", "axb Corp", "Back\\slash", "Backslash", "Ǆemal Ǆ", "ǆemal"
          ]
          const made = []
          for (const name of names) made.push(yield* members.create(a, { name, status: "active" }))
          const terms = [
            "ärzte", "ÄRZTE", "straße", "STRASSE", "ss", "i̇stanbul", "İSTANBUL", "ISTANBUL", "σοφια", "ΣΟΦΙΑ", "Σ", "café", "CAFÉ",
            "%", "_", "\\", "0%", "ǆ", "ǅ", "Ǆ", "e", "zz"
          ]
          const repo = yield* MemberRepo
          for (const term of terms) {
            const expected = yield* wholeOrder(a, { name: term }, `lower(name) COLLATE "C", id`)
            const got = yield* repo.list(a, { name: term }, undefined, 1)
            assert.deepStrictEqual(got.rows.map((m) => m.id), expected, `search ${term}`)
            assert.strictEqual(got.total, expected.length, `search ${term}: total`)
          }
          yield* members.update(a, made[0]!.id, { name: "Zahnarzt" })
          assert.deepStrictEqual((yield* repo.list(a, { name: "zahn" }, undefined, 1)).rows.map((m) => m.id), [made[0]!.id])
          assert.deepStrictEqual((yield* repo.list(a, { name: "ärzte" }, undefined, 1)).rows.map((m) => m.id), [made[1]!.id])
          yield* assertKeptRowsTrue
        }))

      it.effect("a search read again follows every write since: creates, renames, re-dates, deletes, moves; another chamber's writes change nothing", () =>
        Effect.gen(function*() {
          const a = yield* tenant("Kept")
          const b = yield* tenant("Elsewhere")
          const members = yield* Members
          const sql = yield* SqlClient.SqlClient
          const made = []
          for (let i = 0; i < 230; i++) made.push(yield* members.create(a, { name: `Kept ${String(i % 50).padStart(2, "0")}`, status: "active" }))
          const check = (label: string) =>
            Effect.gen(function*() {
              yield* assertEveryPage(a, { name: "kept" }, label)
              yield* assertEveryPage(a, { name: "t 1" }, label)
            })
          yield* check("first reads")
          yield* check("read again")
          yield* members.create(a, { name: "Kept 00 too", status: "pending" })
          yield* check("after a create")
          yield* members.update(a, made[3]!.id, { name: "Gone elsewhere" })
          yield* members.update(a, made[4]!.id, { name: "Kept 99" })
          yield* check("after renames")
          yield* sql`UPDATE members SET created_at = created_at - interval '1 day' WHERE id = ${made[5]!.id}`.pipe(Effect.orDie)
          yield* check("after a new creation time")
          yield* sql`DELETE FROM members WHERE id IN ${sql.in(made.slice(6, 9).map((m) => m.id))}`.pipe(Effect.orDie)
          yield* check("after deletes")
          yield* sql`UPDATE members SET tenant_id = ${b} WHERE id = ${made[9]!.id}`.pipe(Effect.orDie)
          yield* check("after a move to another chamber")
          yield* members.create(b, { name: "Kept elsewhere", status: "active" })
          yield* check("after another chamber's create")
          yield* assertKeptRowsTrue
        }))

      it.effect("a search inside a writing transaction sees that transaction's writes, and keeps nothing of them once it rolls back", () =>
        Effect.gen(function*() {
          const a = yield* tenant("Transaction")
          const members = yield* Members
          const repo = yield* MemberRepo
          const sql = yield* SqlClient.SqlClient
          const first = yield* members.create(a, { name: "Draft One", status: "active" })
          const names = (text: string) => repo.list(a, { name: text }, undefined, 1).pipe(Effect.map((p) => [p.rows.map((m) => m.id), p.total]))
          assert.deepStrictEqual(yield* names("draft"), [[first.id], 1])
          const seen = yield* sql.withTransaction(Effect.gen(function*() {
            yield* members.update(a, first.id, { name: "Renamed" })
            assert.deepStrictEqual(yield* names("draft"), [[], 0])
            return yield* Effect.fail("undo" as const)
          })).pipe(Effect.flip)
          assert.strictEqual(seen, "undo")
          // Two committed creates take the chamber's version where the rolled-back rename had taken it.
          const second = yield* members.create(a, { name: "Other", status: "active" })
          yield* members.create(a, { name: "Else", status: "active" })
          assert.deepStrictEqual(yield* names("draft"), [[first.id], 1])
          assert.deepStrictEqual(yield* names("other"), [[second.id], 1])
        }))
    })

    layer(onDatabase(rt, (config) => StorageLive(config)), { timeout: 120_000 })((it) => {
      it.effect("TRUNCATE empties the kept rows with the members", () =>
        Effect.gen(function*() {
          const a = yield* tenant("Truncated")
          const members = yield* Members
          const sql = yield* SqlClient.SqlClient
          for (let i = 0; i < 5; i++) yield* members.create(a, { name: `Gone ${i}`, status: "active" })
          yield* sql`TRUNCATE members CASCADE`.pipe(Effect.orDie)
          yield* assertCountsTrue(a, "after TRUNCATE")
          yield* assertKeptRowsTrue
          yield* members.create(a, { name: "Back", status: "lapsed" })
          yield* assertCountsTrue(a, "after a create")
        }))
    })

    layer(onDatabase(rt, (config) => DatabaseLive(config, { migrateOnStart: false })), { timeout: 120_000 })((it) => {
      it.effect("the migration counts and names the members already there, and indexes their names by trigram", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* migrateBefore(11)
          const tenants = yield* sql<{ readonly id: bigint }>`INSERT INTO tenants (public_id, name) VALUES ('chm_a', 'A'), ('chm_b', 'B') RETURNING id`
          const [a, b] = tenants.map((t) => Number(t.id)) as [number, number]
          yield* sql`
            INSERT INTO members (tenant_id, name, status, created_at)
            SELECT CASE WHEN g % 3 = 0 THEN ${b}::int8 ELSE ${a}::int8 END, 'Member ' || g,
                   (ARRAY['active', 'pending', 'lapsed', 'former'])[1 + g % 4], timestamptz '2020-01-01' + g * interval '1 hour'
            FROM generate_series(1, 230) g`
          yield* migrate
          yield* assertKeptRowsTrue
          // pg_trgm is there on both runtimes (PGlite loads it), so the trigram index is too.
          const indexes = yield* sql`SELECT indexname FROM pg_indexes WHERE tablename = 'member_names' AND indexname = 'member_names_trigrams'`
          assert.strictEqual(indexes.length, 1)
          const counts = yield* sql<{ readonly tenant_id: bigint | number; readonly n: bigint | number }>`
            SELECT tenant_id, sum(members) AS n FROM member_counts GROUP BY tenant_id ORDER BY tenant_id`
          assert.deepStrictEqual(counts.map((r) => [Number(r.tenant_id), Number(r.n)]), [[a, 154], [b, 76]])
        }).pipe(Effect.orDie))
    })

    layer(onDatabase(rt, (config) => DatabaseLive(config, { migrateOnStart: false })), { timeout: 120_000 })((it) => {
      it.effect("where pg_trgm cannot be created the migration still succeeds, and name searches still find what ILIKE finds", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          // An object the extension would create makes CREATE EXTENSION fail, as a missing package or privilege would.
          yield* sql`CREATE FUNCTION show_trgm(text) RETURNS text[] LANGUAGE sql AS 'SELECT ARRAY[]::text[]'`
          yield* migrate
          const indexes = yield* sql`SELECT indexname FROM pg_indexes WHERE tablename = 'member_names' AND indexname = 'member_names_trigrams'`
          assert.deepStrictEqual(indexes, [])
          const [t] = yield* sql<{ readonly id: bigint }>`INSERT INTO tenants (public_id, name) VALUES ('chm_x', 'X') RETURNING id`
          yield* sql`INSERT INTO members (tenant_id, name, status) SELECT ${t!.id}, 'Shop ' || g, 'active' FROM generate_series(1, 150) g`
          const tenantId = Number(t!.id)
          const repo = yield* MemberRepo.pipe(Effect.provide(MemberRepoSql))
          for (const term of ["shop 1", "SHOP 1", "p 14", "shop"]) {
            const expected = yield* wholeOrder(tenantId, { name: term }, `lower(name) COLLATE "C", id`)
            // The first read, and one read again (kept), of each page.
            for (const read of [1, 2]) {
              for (let page = 1; page <= 3; page++) {
                const got = yield* repo.list(tenantId, { name: term }, undefined, page)
                assert.deepStrictEqual(
                  [got.rows.map((m) => m.id), got.total],
                  [expected.slice((page - 1) * PER_PAGE, page * PER_PAGE), expected.length],
                  `${term} page ${page} read ${read}`
                )
              }
            }
          }
        }).pipe(Effect.orDie))
    })
  })
}
