/**
 * docs/embedding.md's program, run as its own process against a chamber prepared through the
 * core library, on every storage runtime: it registers, records gateway payments, sells a
 * sponsorship, an ad and a room, closes past events, and its events reach the outbox.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type DatabaseConfig, StorageLive } from "@chamber/pg-adapter"
import { DatabaseConfigRef, runtimes } from "@chamber/pg-adapter/testing"
import { Events, Importer, Invoices, Outbox, Payments, Tenants } from "@chamber/core"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const PROGRAM = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const DAY = 86_400_000

/** The program, as its team runs it: its own process, the database from the environment. */
const runProgram = (env: Record<string, string>, chamberId: string) =>
  Effect.promise(() =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [PROGRAM, chamberId], { env: { ...process.env, ...env } }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr }))
    })
  )

for (const rt of runtimes()) {
  describe(`the embedding example on ${rt.name}`, () => {
    layer(rt.database, { timeout: 120_000 })((it) => {
    it.effect("registers walk-ins, records gateway payments (invoice.paid), sells rows only the core makes, completes past events", () =>
      Effect.gen(function*() {
        const dir = mkdtempSync(join(tmpdir(), "chamber-embed-"))
        const base = yield* DatabaseConfigRef
        // On PGlite, this test process owns the data directory and the program comes in through its socket.
        const config: DatabaseConfig = base._tag === "Embedded" ? { _tag: "Embedded", dataDir: join(dir, "data") } : base
        const env: Record<string, string> = config._tag === "Embedded" ? { CHAMBER_DATA_DIR: config.dataDir!, DATABASE_URL: "" } : { DATABASE_URL: config.url }
        yield* Effect.gen(function*() {
          const tenant = yield* (yield* Tenants).create({ name: "Embedded Chamber" })
          const iso = (days: number) => new Date(Date.now() + days * DAY).toISOString()
          const { ids } = yield* (yield* Importer).run(tenant.id, {
            members: [{ ref: "m", name: "Acme", status: "active" }],
            events: [
              { ref: "past", title: "Last month's mixer", starts_at: iso(-30), status: "published" },
              { ref: "next", title: "Gala", starts_at: iso(10), status: "published" }
            ],
            invoices: [
              { ref: "a", member_ref: "m", lines: [{ description: "Dues", unit: "300.00" }], status: "open" },
              { ref: "b", member_ref: "m", lines: [{ description: "Draft", unit: "10.00" }] }
            ],
            payments: [{ invoice_ref: "a", method: "check", amount: "100.00" }]
          })

          const run = yield* runProgram(env, tenant.public_id)
          assert.strictEqual(run.code, 0, run.stderr)
          const out = JSON.parse(run.stdout)
          assert.strictEqual(out.chamber, tenant.public_id)
          assert.lengthOf(out.registered, 2)
          assert.deepStrictEqual(out.paid, [{ invoice: ids.a, amount_cents: 20000 }])
          assert.deepStrictEqual(out.completed, [ids.past])

          const invoice = yield* (yield* Invoices).get(tenant.id, ids.a!)
          assert.deepInclude(invoice.attributes, { status: "paid", balance_cents: 0 })
          assert.strictEqual((yield* (yield* Invoices).get(tenant.id, ids.b!)).attributes.status, "draft")
          const paidBy = (yield* (yield* Payments).list(tenant.id, { sort: "created_at" })).rows.map((p) => p.attributes.gateway)
          assert.deepStrictEqual(paidBy, [null, "stripe"])
          assert.strictEqual((yield* (yield* Events).get(tenant.id, ids.past!)).attributes.status, "completed")
          assert.strictEqual((yield* (yield* Events).get(tenant.id, ids.next!)).attributes.status, "published")
          const kinds = (yield* (yield* Outbox).list(tenant.id)).map((e) => e.type).filter((k) => k !== "member.created")
          assert.deepStrictEqual(kinds, [
            // The import's.
            "event.created",
            "event.created",
            "invoice.created",
            "invoice.updated",
            "invoice.issued",
            "invoice.created",
            "payment.created",
            "invoice.updated",
            // The program's: each write fires its own, in the order it wrote.
            "event.registration.created",
            "event.registration.created",
            "payment.created",
            "invoice.updated",
            "invoice.paid",
            "sponsorship.created",
            "placement.created",
            "booking.created",
            "event.updated"
          ])
        }).pipe(Effect.provide(StorageLive(config)), Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
      }), 120_000)

    it.effect("docs/embedding.md shows this very program", () => Effect.sync(() => {
      const doc = readFileSync(fileURLToPath(new URL("../../../docs/embedding.md", import.meta.url)), "utf8")
      assert.include(doc, readFileSync(PROGRAM, "utf8").trim())
    }))
    })
  })
}
