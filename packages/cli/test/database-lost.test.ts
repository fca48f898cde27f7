/**
 * Commands that write much when PostgreSQL goes away under them: the connection is cut, through a
 * proxy of the test's own, at a chosen statement. The command says the database does not answer
 * and what that left of its work, and exits 1; run again, it finishes.
 * - `chamber import` (docs/cli.md "While it writes"), cut as it sends its first batch of contacts,
 *   after every member was written in the same transaction: nothing of the file was imported.
 * - `chamber tenant delete` (docs/cli.md "Deleting a chamber"), cut as it removes members: the
 *   same command resumes and finishes.
 * - `chamber export` (docs/cli.md "Export"), cut as it reads contacts: no file is left, neither
 *   the JSON document nor any CSV file, whole or in part.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import pg from "pg"
import { FaultProxy, faultProxy, postgresOnly } from "@chamber/pg-adapter/testing"
import { chamber, Env, envLayer, json } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("database-lost")

const document = {
  members: Array.from({ length: 2_500 }, (_, i) => ({ ref: `m${i}`, name: `Member ${i}`, status: "active" })),
  contacts: Array.from({ length: 1_200 }, (_, i) => ({ first_name: "Ann", last_name: `Lee ${i}`, member_ref: `m${i}` }))
}

/** The chamber's members, read straight from the server (not through the proxy). */
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

/** Every command of the suite through the proxy. */
const throughProxy = Effect.gen(function*() {
  const [env, proxy] = [yield* Env, yield* FaultProxy]
  return { DATABASE_URL: proxy.through(env.DATABASE_URL!) }
})

/**
 * `args` through the proxy, its connection cut as it sends a statement containing `sent`: the
 * command was cut once and exited 1; the last line it wrote on stderr (progress comes before it).
 */
const cutWhile = (sent: string, args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const proxy = yield* FaultProxy
    proxy.cutAt({ sent })
    const cut = yield* chamber(args, yield* throughProxy)
    assert.strictEqual(proxy.cuts(), 1)
    proxy.cutAt(undefined)
    assert.strictEqual(cut.code, 1, cut.stderr)
    return cut.stderr.trimEnd().split("\n").at(-1)!
  })

for (const rt of postgresOnly("commands that lose their database on postgres")) {
  describe(`commands that lose their database on ${rt.name}`, () => {
    const proxied = Layer.unwrap(Effect.map(Env, (env) => faultProxy(env.DATABASE_URL!)))
    layer(Layer.provideMerge(proxied, envLayer(rt)), { timeout: 120_000 })((it) => {
      it.effect("import: says the database does not answer and nothing was imported, exits 1, writes nothing; run again, imports whole", () =>
        Effect.gen(function*() {
          const env = yield* Env
          const file = join(dir, "doc.json")
          writeFileSync(file, JSON.stringify(document))
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Outage Chamber", "--json"]))

          const said = yield* cutWhile("INSERT INTO contacts", ["import", "--tenant", tenant.id, file])
          assert.match(said, /^error: The database does not answer: .+\. Nothing of the file was imported: run the import again once it answers\.$/)
          assert.strictEqual(yield* membersOf(env.DATABASE_URL!, tenant.id), 0)

          const again = json(yield* chamber(["import", "--tenant", tenant.id, file, "--json"], yield* throughProxy))
          assert.deepInclude(again.counts, { members: 2_500, contacts: 1_200 })
          assert.strictEqual(yield* membersOf(env.DATABASE_URL!, tenant.id), 2_500)
        }))

      it.effect("tenant delete: says the database does not answer and to run it again, exits 1; run again, resumes and finishes", () =>
        Effect.gen(function*() {
          const env = yield* Env
          const file = join(dir, "members.json")
          writeFileSync(file, JSON.stringify({ members: document.members.slice(0, 600) }))
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Leaving Chamber", "--json"]))
          json(yield* chamber(["import", "--tenant", tenant.id, file, "--json"]))
          const remove = ["tenant", "delete", tenant.id, "--confirm", "Leaving Chamber", "--batch-size", "100"]

          const said = yield* cutWhile(`DELETE FROM "members"`, remove)
          assert.match(said, /^error: The database does not answer: .+\. Run the same command again once it answers: it resumes where it stopped\.$/)
          assert.isAbove(yield* membersOf(env.DATABASE_URL!, tenant.id), 0)

          const again = json(yield* chamber([...remove, "--json"], yield* throughProxy))
          assert.deepInclude(again, { deleted: true, resumed: true })
          assert.strictEqual(yield* membersOf(env.DATABASE_URL!, tenant.id), 0)
        }))

      it.effect("export: says the database does not answer, exits 1, and leaves no file, JSON or CSV; run again, writes it whole", () =>
        Effect.gen(function*() {
          const file = join(dir, "export-source.json")
          writeFileSync(file, JSON.stringify(document))
          const tenant = json(yield* chamber(["tenant", "create", "--name", "Exported Chamber", "--json"]))
          json(yield* chamber(["import", "--tenant", tenant.id, file, "--json"]))
          const out = join(dir, "export.json")
          const csvDir = join(dir, "export-csv")

          for (const args of [["--out", out], ["--format", "csv", "--out", csvDir]]) {
            assert.match(yield* cutWhile("FROM contacts x", ["export", "--tenant", tenant.id, ...args]), /^error: The database does not answer: .+$/)
          }
          assert.deepStrictEqual([existsSync(out), existsSync(`${out}.partial`)], [false, false])
          assert.deepStrictEqual(readdirSync(csvDir), [])

          const again = json(yield* chamber(["export", "--tenant", tenant.id, "--out", out, "--json"], yield* throughProxy))
          assert.deepInclude(again.counts, { members: 2_500, contacts: 1_200 })
          assert.deepStrictEqual([existsSync(out), existsSync(`${out}.partial`)], [true, false])
        }))
    })
  })
}
