/**
 * Removing a chamber (docs/operations.md "Offboarding a chamber") on every storage runtime: the
 * tables it empties are every table with a `tenant_id` column as the catalogue lists them, in an
 * order the foreign keys allow, each found through an index; a table it could not empty stops it
 * before anything is removed; a batch that fails leaves the chamber marked, and the next run
 * finishes it without touching the other chamber. The command over a running server is tested in
 * cli/test/tenant-delete.test.ts.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as SqlClient from "effect/sql/SqlClient"
import { Importer, Keys, TenantRemoval, TenantRemovalRepo, Tenants } from "@chamber/core"
import { StorageLive } from "../src/index.ts"
import { removalOrder, TRIGGER_ORDER } from "../src/repos/TenantRemovalSql.ts"
import { onDatabase, runtimes } from "./harness.ts"

const holdingTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return (yield* sql<{ readonly name: string }>`
    SELECT table_name AS name FROM information_schema.columns c
    JOIN information_schema.tables t USING (table_schema, table_name)
    WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id' AND t.table_type = 'BASE TABLE'
    ORDER BY 1`).map((r) => r.name)
})

const foreignKeys = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<{ readonly referencing: string; readonly column: string; readonly referenced: string; readonly indexed: boolean }>`
    SELECT r.relname AS referencing, a.attname AS column, p.relname AS referenced,
      EXISTS (SELECT 1 FROM pg_index x WHERE x.indrelid = k.conrelid AND x.indkey[0] = k.conkey[1]) AS indexed
    FROM pg_constraint k
    JOIN pg_class r ON r.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
    WHERE k.contype = 'f' ORDER BY 1, 2`
})

/** The chamber's rows per table with a `tenant_id`. */
const rowsOf = (tenantId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const counts: Record<string, number> = {}
    for (const table of yield* holdingTables) {
      counts[table] = Number((yield* sql<{ readonly n: string }>`SELECT count(*)::text AS n FROM ${sql(table)} WHERE tenant_id = ${tenantId}`)[0]!.n)
    }
    return counts
  })

const document = (prefix: string) => ({
  members: Array.from({ length: 40 }, (_, i) => ({ ref: `m${i}`, name: `${prefix} Member ${i}`, status: "active", custom_fields: { tier: "gold" } })),
  contacts: Array.from({ length: 20 }, (_, i) => ({ ref: `c${i}`, first_name: "Ann", last_name: `${prefix} ${i}`, member_ref: `m${i}` })),
  events: [{ ref: "e1", title: `${prefix} Gala`, starts_at: "2027-01-10T18:00:00Z", status: "published" }],
  registrations: [{ event_ref: "e1", member_ref: "m1", contact_ref: "c1", status: "registered" }]
})

const chamberWithRows = (name: string) =>
  Effect.gen(function*() {
    const tenants = yield* Tenants
    const tenant = yield* tenants.create({ name })
    yield* tenants.addUser(tenant.id, "admin@example.org", "chamber_admin")
    yield* tenants.addField(tenant.id, { resource: "member", key: "tier", label: "Tier", api_visible: true })
    yield* (yield* Importer).run(tenant.id, document(name))
    const key = yield* (yield* Keys).mint({ tenant: tenant.id, asEmail: "admin@example.org", name: "k", scopes: "all" })
    return { tenant, key: key.key }
  }).pipe(Effect.orDie)

for (const rt of runtimes()) {
  describe(`removing a chamber on ${rt.name}`, () => {
    layer(onDatabase(rt, (config) => StorageLive(config)), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("empties every table with a tenant_id column, each before the tables it references, each found by an index", () =>
        Effect.gen(function*() {
          const order = yield* (yield* TenantRemovalRepo).tables
          const holding = yield* holdingTables
          assert.deepStrictEqual([...order].sort(), holding)
          const place = (table: string) => table === "tenants" ? Infinity : order.indexOf(table)
          const keys = yield* foreignKeys
          for (const fk of keys.filter((k) => holding.includes(k.referencing))) {
            assert.isBelow(place(fk.referencing), place(fk.referenced), `${fk.referencing} is emptied before ${fk.referenced}`)
          }
          for (const [first, then] of TRIGGER_ORDER) assert.isBelow(place(first), place(then), `${first} before ${then}`)
          // A chamber's rows are found by its id, and a removed parent's referencing rows by their column, through an index.
          const sql = yield* SqlClient.SqlClient
          const led = (yield* sql<{ readonly name: string }>`
            SELECT DISTINCT t.relname AS name FROM pg_index x
            JOIN pg_class t ON t.oid = x.indrelid JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
            WHERE a.attname = 'tenant_id'`).map((r) => r.name)
          assert.deepStrictEqual(holding.filter((t) => !led.includes(t)), [], "tables without an index led by tenant_id")
          const tables = new Set([...holding, "tenants"])
          assert.deepStrictEqual(
            keys.filter((k) => tables.has(k.referenced) && !k.indexed).map((k) => `${k.referencing}.${k.column}`),
            [],
            "foreign keys into a chamber's tables without an index led by their column"
          )
        }))

      it.effect("a table referencing a chamber's rows without a tenant_id column stops the removal before anything changes", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { tenant } = yield* chamberWithRows("Referenced Chamber")
          const before = yield* rowsOf(tenant.id)
          yield* sql`CREATE TABLE member_notes (member_id bigint REFERENCES members(id), note text)`
          const exit = yield* Effect.exit((yield* TenantRemoval).remove(tenant.public_id, { confirm: "Referenced Chamber" }))
          yield* sql`DROP TABLE member_notes`
          assert.isTrue(Exit.isFailure(exit))
          assert.match(String(Exit.isFailure(exit) ? exit.cause : ""), /member_notes references members without a tenant_id column/)
          assert.deepStrictEqual(yield* rowsOf(tenant.id), before)
          assert.isNull((yield* (yield* Tenants).get(tenant.id)).deleting_at)
        }))

      it.effect("a failed batch leaves the chamber stopped and marked; the next run finishes it and leaves the other chamber whole", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const removal = yield* TenantRemoval
          const staying = yield* chamberWithRows("Staying")
          const leaving = yield* chamberWithRows("Leaving")
          const stayingBefore = yield* rowsOf(staying.tenant.id)
          const leavingBefore = yield* rowsOf(leaving.tenant.id)

          // Removing members fails once half of them are gone (a lost connection, a full disk).
          yield* sql`CREATE FUNCTION refuse_member_removal() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'disk full'; END $$`
          yield* sql.unsafe(`CREATE TRIGGER refuse_member_removal BEFORE DELETE ON members FOR EACH ROW
            WHEN (OLD.tenant_id = ${leaving.tenant.id} AND OLD.name LIKE 'Leaving Member 3%') EXECUTE FUNCTION refuse_member_removal()`)
          const failed = yield* Effect.exit(removal.remove(leaving.tenant.public_id, { confirm: "Leaving", batchSize: 3 }))
          assert.isTrue(Exit.isFailure(failed))
          yield* sql`DROP TRIGGER refuse_member_removal ON members`
          const half = yield* rowsOf(leaving.tenant.id)
          assert.isAbove(half.members!, 0)
          assert.isBelow(half.members!, leavingBefore.members!)
          assert.strictEqual(half.contacts, 0)
          assert.isUndefined(yield* (yield* Keys).authenticate(leaving.key))
          assert.isDefined(yield* (yield* Keys).authenticate(staying.key))
          const marked = yield* Effect.flip((yield* Tenants).get(leaving.tenant.public_id))
          assert.strictEqual(marked.beingDeleted, true)

          // A dry run of what is left counts it; the next run finishes.
          const dry = yield* removal.remove(leaving.tenant.public_id, { confirm: "Leaving", dryRun: true })
          assert.deepStrictEqual(dry.counts, { ...half, rate_limit_windows: 0, tenants: 1 })
          assert.deepStrictEqual(yield* rowsOf(leaving.tenant.id), half)
          const events: Array<number> = []
          const done = yield* removal.remove(leaving.tenant.public_id, { confirm: "Leaving", batchSize: 7, progress: (e) => events.push(e.done) })
          assert.isTrue(done.resumed)
          assert.strictEqual(done.keysRevoked, 0)
          assert.strictEqual(done.counts.members, half.members)
          assert.deepStrictEqual(events, [...events].sort((a, b) => a - b), "progress only goes forward")
          assert.deepStrictEqual(yield* rowsOf(leaving.tenant.id), Object.fromEntries(Object.keys(leavingBefore).map((t) => [t, 0])))
          assert.deepStrictEqual(yield* sql`SELECT 1 FROM tenants WHERE id = ${leaving.tenant.id}`, [])
          assert.deepStrictEqual(yield* rowsOf(staying.tenant.id), stayingBefore)
          yield* sql`DROP FUNCTION refuse_member_removal()`
        }))

      it.effect("a wrong name removes nothing, whatever its case or spaces", () =>
        Effect.gen(function*() {
          const { tenant } = yield* chamberWithRows("Exact Name")
          const before = yield* rowsOf(tenant.id)
          for (const confirm of ["exact name", "Exact Name ", "Exact", ""]) {
            const refused = yield* Effect.flip((yield* TenantRemoval).remove(tenant.public_id, { confirm }))
            assert.strictEqual(refused._tag, "ChamberNameNotConfirmed")
          }
          assert.deepStrictEqual(yield* rowsOf(tenant.id), before)
          assert.isNull((yield* (yield* Tenants).get(tenant.id)).deleting_at)
        }))
    })
  })
}

describe("the removal order", () => {
  it("puts a table before those it must precede, ties by name, and refuses a cycle", () => {
    assert.deepStrictEqual(removalOrder(["c", "b", "a"], [["c", "a"]]), ["b", "c", "a"])
    assert.throws(() => removalOrder(["a", "b"], [["a", "b"], ["b", "a"]]), /reference each other/)
  })
})
