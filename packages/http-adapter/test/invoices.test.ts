/**
 * Invoices and payments over HTTP (docs/api.md "Invoices", "Payments", "Money"), on every storage
 * runtime: drafts totalled exactly in cents from dollar strings, issue with the chamber's gapless
 * numbers and net terms, payments only on open invoices and never beyond the balance, and the
 * invoice.issued / invoice.paid events written with their change. Access, ids and body errors are
 * checked by contract.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Invoices, Outbox, Payments, Tenants, Transactor } from "@chamber/core"
import { runtimes } from "@chamber/pg-adapter/testing"
import { anotherKey, call, chamberWithKey, type Reply, serverOn } from "./fixture.ts"

const SCOPES = "invoices:read,invoices:write,payments:read,payments:write,members:write"

const chamber = Effect.gen(function*() {
  const c = yield* chamberWithKey(SCOPES)
  const member = yield* call("POST", "/api/v1/members", { key: c.key, body: { name: `Billed ${Math.random()}`, status: "active" } })
  return { ...c, memberId: member.body.data.id as number }
})
const data = (reply: Reply, status: number) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.body))
  return reply.body.data
}
/** A business-rule 422: `{message}` and nothing else. */
const assertBusinessRule = (reply: Reply, pattern: RegExp) => {
  assert.strictEqual(reply.status, 422, JSON.stringify(reply.body))
  assert.deepStrictEqual(Object.keys(reply.body), ["message"])
  assert.match(reply.body.message, pattern)
}
/** A validation 422 whose `errors` has exactly `fields`. */
const assertInvalid = (reply: Reply, fields: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, 422, JSON.stringify(reply.body))
  assert.deepStrictEqual(Object.keys(reply.body).sort(), ["errors", "message"])
  assert.sameMembers(Object.keys(reply.body.errors), [...fields], JSON.stringify(reply.body))
  return reply.body.errors
}
const draft = (key: string, memberId: number, lines: ReadonlyArray<unknown> = [{ description: "Dues", unit: "100.00" }], memo?: string) =>
  call("POST", "/api/v1/invoices", { key, body: memo === undefined ? { member_id: memberId, lines } : { member_id: memberId, lines, memo } })
const issue = (key: string, id: number) => call("POST", `/api/v1/invoices/${id}/issue`, { key })
const pay = (key: string, id: number, body: unknown) => call("POST", `/api/v1/invoices/${id}/payments`, { key, body })
const todayPlus = (days: number) => {
  const now = new Date()
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + days)).toISOString().slice(0, 10)
}

for (const rt of runtimes()) {
  describe(`invoices and payments over HTTP on ${rt.name}`, () => {
    layer(serverOn(rt), { timeout: 180_000 })((it) => {
      it.effect("POST /invoices: a draft totalled in cents from dollar strings, quantity 1 by default, the chamber's currency", () =>
        Effect.gen(function*() {
          const { key, memberId } = yield* chamber
          const invoice = data(yield* draft(key, memberId, [
            { description: "Annual dues", unit: "450.00" },
            { description: "Gala tickets", unit: "12.5", quantity: 3 },
            { description: "Free item", unit: "0", quantity: null },
            { description: "Pennies", unit: "0.07", quantity: 2 }
          ], "Thanks!"), 201)
          assert.deepStrictEqual(Object.keys(invoice), ["id", "attributes", "created_at", "updated_at"])
          assert.deepStrictEqual(invoice.attributes, {
            member_id: memberId,
            number: null,
            status: "draft",
            currency: "USD",
            subtotal_cents: 45000 + 3750 + 14,
            total_cents: 45000 + 3750 + 14,
            amount_paid_cents: 0,
            balance_cents: 45000 + 3750 + 14,
            issued_at: null,
            due_on: null,
            voided_at: null,
            memo: "Thanks!"
          })
          // Nothing of the request that is not an attribute is shown, and the pay token never is.
          assert.notInclude(JSON.stringify(invoice), "pay_token")
          assert.notInclude(JSON.stringify(invoice), "lines")
        }))

      it.effect("money: at most two decimals, no sign, no exponent, no number, no more cents than JSON carries exactly: 422 on lines.N.unit", () =>
        Effect.gen(function*() {
          const { key, memberId } = yield* chamber
          for (const unit of ["12.505", "-1.00", "+1.00", "1e3", "abc", "", " 1.00", "1,000.00", ".50", "12.", "0x10", "١٢", "$12.50", 12.5, null, true]) {
            const errors = assertInvalid(yield* draft(key, memberId, [{ description: "X", unit }]), ["lines.0.unit"])
            const expected = typeof unit === "string"
              ? 'The unit field must be an amount in dollars such as "12.50" (digits, at most two decimal places; no $, sign or thousands separator).'
              : 'The unit field must be a string in dollars such as "12.50".'
            assert.deepStrictEqual(errors["lines.0.unit"], [expected], JSON.stringify(unit))
          }
          for (const unit of ["92233720368547758.08", "99999999999999999999999.99", "90071992547409.92"]) {
            const errors = assertInvalid(yield* draft(key, memberId, [{ description: "X", unit }]), ["lines.0.unit"])
            assert.deepStrictEqual(errors["lines.0.unit"], ["The unit field must not be greater than 90071992547409.91."])
          }
          const most = data(yield* draft(key, memberId, [{ description: "Everything", unit: "90071992547409.91" }]), 201)
          assert.strictEqual(most.attributes.total_cents, Number.MAX_SAFE_INTEGER)
          const tooMuch = assertInvalid(
            yield* draft(key, memberId, [{ description: "A", unit: "90071992547409.91" }, { description: "B", unit: "0.01" }]),
            ["lines"]
          )
          assert.deepStrictEqual(tooMuch.lines, ["The invoice total must not be greater than 90071992547409.91."])
          assertInvalid(yield* draft(key, memberId, [{ description: "A", unit: "1.00", quantity: 9_007_199_254_740_991 }, { description: "B", unit: "1.00" }]), ["lines"])
        }))

      it.effect("InvoiceCreate rules: member of this chamber, at least one line, bounds keyed by lines.N.field", () =>
        Effect.gen(function*() {
          const { key, memberId } = yield* chamber
          const other = yield* chamber
          for (const member_id of [other.memberId, 99_999_999]) {
            const errors = assertInvalid(yield* draft(key, member_id), ["member_id"])
            assert.deepStrictEqual(errors.member_id, ["The selected member id is invalid."])
          }
          assert.deepStrictEqual(assertInvalid(yield* call("POST", "/api/v1/invoices", { key, body: { member_id: memberId } }), ["lines"]).lines, [
            "The lines field is required."
          ])
          assert.deepStrictEqual(assertInvalid(yield* draft(key, memberId, []), ["lines"]).lines, ["The lines field must have at least 1 item."])
          assertInvalid(yield* draft(key, memberId, Array.from({ length: 501 }, () => ({ description: "x", unit: "1.00" }))), ["lines"])
          const errors = assertInvalid(
            yield* draft(key, memberId, [
              { description: "ok", unit: "1.00" },
              { unit: "1.00", quantity: 0 },
              { description: "x".repeat(256), quantity: 1.5 }
            ], "m".repeat(2001)),
            ["lines.1.description", "lines.1.quantity", "lines.2.description", "lines.2.unit", "lines.2.quantity", "memo"]
          )
          assert.deepStrictEqual(errors["lines.1.quantity"], ["The quantity field must be at least 1."])
          assert.deepStrictEqual(errors["lines.2.unit"], ["The unit field is required."])
          assert.deepStrictEqual(errors["lines.2.description"], ["The description field must not be greater than 255 characters."])
          assert.deepStrictEqual(errors.memo, ["The memo field must not be greater than 2000 characters."])
          // Fields that are not the client's to set are ignored.
          const invoice = data(yield* call("POST", "/api/v1/invoices", {
            key,
            body: { member_id: memberId, lines: [{ description: "a", unit: "1.00" }], status: "paid", number: "X-1", total_cents: 5, pay_token: "t" }
          }), 201)
          assert.deepInclude(invoice.attributes, { status: "draft", number: null, total_cents: 100 })
        }))

      it.effect("issue: the next number, due today + net terms, open, invoice.issued with the invoice; a second issue is a business-rule 422", () =>
        Effect.gen(function*() {
          const { tenant, key, memberId } = yield* chamber
          const first = data(yield* draft(key, memberId), 201)
          const second = data(yield* draft(key, memberId), 201)
          const before = Date.now()
          const issued = data(yield* issue(key, second.id), 200)
          assert.deepInclude(issued.attributes, { number: "INV-000001", status: "open", due_on: todayPlus(30), balance_cents: 10000, voided_at: null })
          assert.isAtLeast(Date.parse(issued.attributes.issued_at), before - 1000)
          assert.strictEqual(new Date(issued.attributes.issued_at).toISOString(), issued.attributes.issued_at)
          assert.strictEqual(data(yield* issue(key, first.id), 200).attributes.number, "INV-000002")
          assertBusinessRule(yield* issue(key, second.id), /^Only a draft invoice can be issued; this invoice is open\.$/)
          const events = yield* (yield* Outbox).list(tenant.id, { type: "invoice.issued" })
          assert.deepStrictEqual(events.map((e) => (e.data as any).attributes.number), ["INV-000001", "INV-000002"])
          assert.deepStrictEqual(events[0]!.data, issued)
          assert.strictEqual((yield* issue(key, 99_999_999)).status, 404)
        }))

      it.effect("a chamber's own prefix, net terms and currency", () =>
        Effect.gen(function*() {
          const tenant = yield* (yield* Tenants).create({ name: "Euro Chamber", currency: "EUR", invoice_prefix: "EC-", net_terms: 14 }).pipe(Effect.orDie)
          yield* (yield* Tenants).addUser(tenant.id, "admin@chamber.example", "chamber_admin").pipe(Effect.orDie)
          const key = yield* anotherKey(tenant.id, SCOPES)
          const member = data(yield* call("POST", "/api/v1/members", { key, body: { name: "Euro Member", status: "active" } }), 201)
          const invoice = data(yield* draft(key, member.id), 201)
          assert.strictEqual(invoice.attributes.currency, "EUR")
          assert.deepInclude(data(yield* issue(key, invoice.id), 200).attributes, { number: "EC-000001", due_on: todayPlus(14), currency: "EUR" })
        }))

      it.effect("50 concurrent issues in one chamber get 50 distinct consecutive numbers; another chamber's sequence is its own", () =>
        Effect.gen(function*() {
          const a = yield* chamber
          const b = yield* chamber
          const drafts = yield* Effect.forEach(Array.from({ length: 50 }), () => draft(a.key, a.memberId).pipe(Effect.map((r) => data(r, 201).id as number)), {
            concurrency: 10
          })
          const bDraft = data(yield* draft(b.key, b.memberId), 201)
          const [numbers, bIssued] = yield* Effect.all([
            Effect.forEach(drafts, (id) => issue(a.key, id).pipe(Effect.map((r) => data(r, 200).attributes.number as string)), { concurrency: 50 }),
            issue(b.key, bDraft.id)
          ], { concurrency: 2 })
          assert.deepStrictEqual([...numbers].sort(), Array.from({ length: 50 }, (_, i) => `INV-${String(i + 1).padStart(6, "0")}`))
          assert.strictEqual(data(bIssued, 200).attributes.number, "INV-000001")
        }))

      it.effect("an issue rolled back with its transaction leaves the draft, no event, and its number for the next issue", () =>
        Effect.gen(function*() {
          const { tenant, key, memberId } = yield* chamber
          const invoice = data(yield* draft(key, memberId), 201)
          const invoices = yield* Invoices
          const failed = yield* (yield* Transactor).withTransaction(
            Effect.andThen(invoices.issue(tenant.id, invoice.id), Effect.fail("later step failed" as const))
          ).pipe(Effect.flip)
          assert.strictEqual(failed, "later step failed")
          assert.strictEqual((yield* invoices.get(tenant.id, invoice.id)).attributes.status, "draft")
          assert.deepStrictEqual(yield* (yield* Outbox).list(tenant.id, { type: "invoice.issued" }), [])
          assert.strictEqual(data(yield* issue(key, invoice.id), 200).attributes.number, "INV-000001")
        }))

      it.effect("GET /invoices: newest issued first with drafts last, a status filter, created_at sorts; another chamber's never", () =>
        Effect.gen(function*() {
          const { key, memberId } = yield* chamber
          const other = yield* chamber
          data(yield* draft(other.key, other.memberId), 201)
          const ids: Array<number> = []
          for (let i = 0; i < 4; i++) ids.push(data(yield* draft(key, memberId), 201).id)
          data(yield* issue(key, ids[2]!), 200)
          data(yield* issue(key, ids[0]!), 200)
          const list = (query: string) =>
            call("GET", `/api/v1/invoices${query}`, { key }).pipe(Effect.map((r) => {
              assert.strictEqual(r.status, 200, JSON.stringify(r.body))
              return r.body.data.map((i: any) => i.id) as Array<number>
            }))
          assert.deepStrictEqual(yield* list(""), [ids[0], ids[2], ids[3], ids[1]])
          assert.deepStrictEqual(yield* list("?sort=bogus"), [ids[0], ids[2], ids[3], ids[1]])
          assert.deepStrictEqual(yield* list("?sort=issued_at"), [ids[2], ids[0], ids[1], ids[3]])
          assert.deepStrictEqual(yield* list("?sort=created_at"), ids)
          assert.deepStrictEqual(yield* list("?sort=-created_at"), [...ids].reverse())
          assert.deepStrictEqual(yield* list("?status=open"), [ids[0], ids[2]])
          assert.deepStrictEqual(yield* list("?status=draft&sort=created_at"), [ids[1], ids[3]])
          assert.deepStrictEqual(yield* list("?status=paid"), [])
          const bad = yield* call("GET", "/api/v1/invoices?status=sent", { key })
          assertInvalid(bad, ["status"])
          const page = yield* call("GET", "/api/v1/invoices", { key })
          assert.deepStrictEqual(page.body.meta, { current_page: 1, per_page: 100, total: 4, last_page: 1 })
        }))

      it.effect("payments: applied in full to the invoice, gateway null, notes never shown; the one that clears the balance makes it paid and fires invoice.paid", () =>
        Effect.gen(function*() {
          const { tenant, key, memberId } = yield* chamber
          const invoice = data(yield* draft(key, memberId, [{ description: "Dues", unit: "300.00" }]), 201)
          data(yield* issue(key, invoice.id), 200)
          const first = data(yield* pay(key, invoice.id, {
            method: "check",
            amount: "100.5",
            received_on: "2026-11-20",
            reference: "Check #1042",
            notes: "front desk"
          }), 201)
          assert.deepStrictEqual(Object.keys(first), ["id", "attributes", "created_at", "updated_at"])
          assert.deepStrictEqual(first.attributes, {
            member_id: memberId,
            method: "check",
            gateway: null,
            amount_cents: 10050,
            received_on: "2026-11-20",
            reference: "Check #1042"
          })
          assert.notInclude(JSON.stringify(first), "front desk")
          const outbox = yield* Outbox
          assert.deepStrictEqual(yield* outbox.list(tenant.id, { type: "invoice.paid" }), [])
          const open = (yield* (yield* Invoices).get(tenant.id, invoice.id)).attributes
          assert.deepInclude(open, { status: "open", amount_paid_cents: 10050, balance_cents: 19950 })
          data(yield* pay(key, invoice.id, { method: "card", amount: "199.50" }), 201)
          const paid = yield* (yield* Invoices).get(tenant.id, invoice.id)
          assert.deepInclude(paid.attributes, { status: "paid", amount_paid_cents: 30000, balance_cents: 0 })
          const events = yield* outbox.list(tenant.id, { type: "invoice.paid" })
          assert.deepStrictEqual(events.map((e) => e.data), [paid])
          assertBusinessRule(yield* pay(key, invoice.id, { method: "cash", amount: "1.00" }), /^This invoice is paid;/)
        }))

      it.effect("business-rule 422s: overpayment states the balance, refund, and every status but open; nothing is recorded", () =>
        Effect.gen(function*() {
          const { tenant, key, memberId } = yield* chamber
          const invoices = yield* Invoices
          const open = data(yield* draft(key, memberId, [{ description: "Dues", unit: "225.00" }]), 201)
          data(yield* issue(key, open.id), 200)
          const over = yield* pay(key, open.id, { method: "check", amount: "225.01" })
          assertBusinessRule(over, /balance of 225\.00 USD/)
          assert.include(over.body.message, "22500")
          assertBusinessRule(yield* pay(key, open.id, { method: "refund", amount: "10.00" }), /refund/i)
          const drafted = data(yield* draft(key, memberId), 201)
          assertBusinessRule(yield* pay(key, drafted.id, { method: "cash", amount: "1.00" }), /^This invoice is draft; only an open invoice can take a payment\.$/)
          const voided = data(yield* draft(key, memberId), 201)
          data(yield* issue(key, voided.id), 200)
          yield* invoices.void(tenant.id, voided.id)
          assertBusinessRule(yield* pay(key, voided.id, { method: "cash", amount: "1.00" }), /^This invoice is void;/)
          // A draft may be voided too: it never gets a number.
          const dropped = yield* invoices.void(tenant.id, data(yield* draft(key, memberId), 201).id)
          assert.deepInclude(dropped.attributes, { status: "void", number: null })
          assert.isString(dropped.attributes.voided_at)
          assertBusinessRule(yield* issue(key, dropped.id), /^Only a draft invoice can be issued; this invoice is void\.$/)
          const lost = data(yield* draft(key, memberId), 201)
          data(yield* issue(key, lost.id), 200)
          const marked = yield* invoices.markUncollectible(tenant.id, lost.id)
          assert.strictEqual(marked.attributes.status, "uncollectible")
          assertBusinessRule(yield* pay(key, lost.id, { method: "cash", amount: "1.00" }), /^This invoice is uncollectible;/)
          assert.deepInclude((yield* invoices.get(tenant.id, open.id)).attributes, { amount_paid_cents: 0, balance_cents: 22500, status: "open" })
          assert.strictEqual((yield* call("GET", "/api/v1/payments", { key })).body.meta.total, 0)
        }))

      it.effect("PaymentCreate validation: method, amount in dollars greater than zero, bounds; an unknown invoice is a 404", () =>
        Effect.gen(function*() {
          const { key, memberId } = yield* chamber
          const invoice = data(yield* draft(key, memberId), 201)
          data(yield* issue(key, invoice.id), 200)
          assert.deepStrictEqual(assertInvalid(yield* pay(key, invoice.id, {}), ["method", "amount"]).amount, ["The amount field is required."])
          assert.deepStrictEqual(assertInvalid(yield* pay(key, invoice.id, { method: "cash", amount: "0.00" }), ["amount"]).amount, [
            "The amount field must be greater than 0.00."
          ])
          assertInvalid(yield* pay(key, invoice.id, { method: "cash", amount: 5 }), ["amount"])
          assertInvalid(yield* pay(key, invoice.id, { method: "cash", amount: "5.001" }), ["amount"])
          assertInvalid(yield* pay(key, invoice.id, { method: "bitcoin", amount: "5.00" }), ["method"])
          assertInvalid(
            yield* pay(key, invoice.id, { method: "cash", amount: "5.00", received_on: "2026-02-30", reference: "r".repeat(256), notes: "n".repeat(2001) }),
            ["received_on", "reference", "notes"]
          )
          assert.strictEqual((yield* pay(key, 99_999_999, { method: "cash", amount: "5.00" })).status, 404)
        }))

      it.effect("two concurrent payments of the whole balance: one is recorded, the other is refused", () =>
        Effect.gen(function*() {
          const { tenant, key, memberId } = yield* chamber
          const invoice = data(yield* draft(key, memberId), 201)
          data(yield* issue(key, invoice.id), 200)
          const replies = yield* Effect.all([pay(key, invoice.id, { method: "cash", amount: "100.00" }), pay(key, invoice.id, { method: "card", amount: "100.00" })], {
            concurrency: 2
          })
          assert.sameMembers(replies.map((r) => r.status), [201, 422])
          assert.lengthOf(yield* (yield* Outbox).list(tenant.id, { type: "invoice.paid" }), 1)
        }))

      it.effect("GET /payments: newest received first (undated last), sorts; gateway payments recorded by the core library show their gateway", () =>
        Effect.gen(function*() {
          const { tenant, key, memberId } = yield* chamber
          const invoice = data(yield* draft(key, memberId, [{ description: "Dues", unit: "1000.00" }]), 201)
          data(yield* issue(key, invoice.id), 200)
          const a = data(yield* pay(key, invoice.id, { method: "cash", amount: "1.00", received_on: "2026-01-05" }), 201)
          const b = data(yield* pay(key, invoice.id, { method: "cash", amount: "1.00" }), 201)
          const c = data(yield* pay(key, invoice.id, { method: "cash", amount: "1.00", received_on: "2026-03-01" }), 201)
          const g = yield* (yield* Payments).recordGateway(tenant.id, invoice.id, { method: "card", amount_cents: 250, gateway: "stripe", reference: "ch_1" })
          assert.deepInclude(g.attributes, { gateway: "stripe", amount_cents: 250, received_on: null, member_id: memberId })
          const list = (query: string) =>
            call("GET", `/api/v1/payments${query}`, { key }).pipe(Effect.map((r) => r.body.data.map((p: any) => p.id) as Array<number>))
          assert.deepStrictEqual(yield* list(""), [c.id, a.id, g.id, b.id])
          assert.deepStrictEqual(yield* list("?sort=received_on"), [a.id, c.id, b.id, g.id])
          assert.deepStrictEqual(yield* list("?sort=created_at"), [a.id, b.id, c.id, g.id])
          const bad = yield* (yield* Payments).recordGateway(tenant.id, invoice.id, { method: "card", amount_cents: 0, gateway: "" }).pipe(Effect.flip)
          assert.sameMembers(Object.keys((bad as any).errors), ["amount_cents", "gateway"])
        }))
    })
  })
}
