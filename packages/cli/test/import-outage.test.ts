/**
 * `chamber import` when PostgreSQL goes away while it writes (docs/cli.md "While it writes"): the
 * connection is cut, through a proxy of the test's own, as the importer sends its first batch of
 * contacts, after every member was written in the same transaction. The command says the database
 * does not answer and that nothing of the file was imported, exits 1, and the chamber has nothing
 * of it; run again, the same file imports whole.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import pg from "pg"
import { FaultProxy, faultProxy, postgresOnly } from "@chamber/pg-adapter/testing"
import { chamber, Env, envLayer, json } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("import-outage")

const document = {
  members: Array.from({ length: 2_500 }, (_, i) => ({ ref: `m${i}`, name: `Member ${i}`, status: "active" })),
  contacts: Array.from({ length: 1_200 }, (_, i) => ({ first_name: "Ann", last_name: `Lee ${i}`, member_ref: `m${i}` }))
}

const membersOf = (url: string, publicId: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM members m JOIN tenants t ON t.id = m.tenant_id WHERE t.public_id = $1",
        [publicId]
      )
      return rows[0].n as number
    } finally {
      await client.end()
    }
  })

for (const rt of postgresOnly("chamber import when the database goes away on postgres")) {
  describe(`chamber import when the database goes away on ${rt.name}`, () => {
    const proxied = Layer.unwrap(Effect.map(Env, (env) => faultProxy(env.DATABASE_URL!)))
    layer(Layer.provideMerge(proxied, envLayer(rt)), { timeout: 120_000 })((it) => {
      it.effect("says the database does not answer and nothing was imported, exits 1, writes nothing; run again, imports whole", () =>
        Effect.gen(function*() {
          const env = yield* Env
          const proxy = yield* FaultProxy
          const file = join(dir, "doc.json")
          writeFileSync(file, JSON.stringify(document))
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Outage Chamber", "--json"]))
          const through = { DATABASE_URL: proxy.through(env.DATABASE_URL!) }

          proxy.cutAt({ sent: "INSERT INTO contacts" })
          const cut = yield* chamber(["import", "--tenant", tenant.id, file], through)
          assert.strictEqual(proxy.cuts(), 1)
          assert.strictEqual(cut.code, 1)
          assert.match(cut.stderr, /(^|\n)error: The database does not answer: [^\n]+\. Nothing of the file was imported: run the import again once it answers\.\n$/)
          assert.strictEqual(yield* membersOf(env.DATABASE_URL!, tenant.id), 0)

          proxy.cutAt(undefined)
          const again = json(yield* chamber(["import", "--tenant", tenant.id, file, "--json"], through))
          assert.deepInclude(again.counts, { members: 2_500, contacts: 1_200 })
          assert.strictEqual(yield* membersOf(env.DATABASE_URL!, tenant.id), 2_500)
        }))
    })
  })
}
