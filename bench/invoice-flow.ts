/**
 * The invoice flow of `pnpm bench` for the scripts that measure it apart (per-flow.ts,
 * instructions.ts): a chamber of 300 members with a back-office key, and the flow (create a
 * draft, issue it, pay it whole) as one autocannon request sequence.
 */
import * as Effect from "effect/Effect"
import { Keys, Members, Tenants } from "../packages/core/src/index.ts"
import { invoiceBodies, memberInputs, paymentBodies } from "./seed-data.ts"

/** The chamber, its members' ids, a key that may write invoices and payments, and one that reads. */
export const seedChamber = Effect.gen(function*() {
  const tenant = yield* (yield* Tenants).create({ name: "Greater Riverside Chamber of Commerce", website: "https://riverside-chamber.example" })
  yield* (yield* Tenants).addUser(tenant.id, "admin@riverside-chamber.example", "chamber_admin")
  const members = yield* Members
  const ids: Array<number> = []
  for (const input of memberInputs(300)) ids.push((yield* members.create(tenant.id, input)).id)
  const key = yield* (yield* Keys).mint({
    tenant: tenant.id,
    asEmail: "admin@riverside-chamber.example",
    name: "Back office",
    scopes: "members:write,invoices:write,payments:write",
    dailyLimit: 2_000_000_000
  })
  const read = yield* (yield* Keys).mint({ tenant: tenant.id, asEmail: "admin@riverside-chamber.example", name: "Directory", scopes: "read", dailyLimit: 2_000_000_000 })
  return { key: key.key, readKey: read.key, memberIds: ids }
}).pipe(Effect.orDie)

interface FlowContext {
  invoice?: number | undefined
  balance?: number | undefined
}

/** The flow of `pnpm bench`'s invoice endpoint, as one autocannon request sequence. */
export const flowRequests = (memberIds: ReadonlyArray<number>) => {
  const nextInvoice = invoiceBodies(memberIds)
  const nextPayment = paymentBodies()
  const json = { "content-type": "application/json" }
  return [
    {
      method: "POST",
      path: "/api/v1/invoices",
      headers: json,
      setupRequest: (request: Record<string, unknown>) => ({ ...request, body: JSON.stringify(nextInvoice()) }),
      onResponse: (status: number, body: string, context: FlowContext) => {
        const data = status === 201 ? JSON.parse(body).data : undefined
        context.invoice = data?.id
        context.balance = data?.attributes.balance_cents
      }
    },
    {
      method: "POST",
      setupRequest: (request: Record<string, unknown>, context: FlowContext) =>
        context.invoice === undefined ? undefined : { ...request, path: `/api/v1/invoices/${context.invoice}/issue` }
    },
    {
      method: "POST",
      headers: json,
      setupRequest: (request: Record<string, unknown>, context: FlowContext) =>
        context.invoice === undefined
          ? undefined
          : { ...request, path: `/api/v1/invoices/${context.invoice}/payments`, body: JSON.stringify(nextPayment(context.balance!)) }
    }
  ]
}

