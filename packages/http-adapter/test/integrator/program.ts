/**
 * An integrator's program, written against the client that openapi-typescript generates from the
 * served document (./api.ts, made by openapi-client.test.ts) and openapi-fetch, type-checked with
 * `tsc --strict` and then run against the server. It prints one JSON line of what it saw.
 */
import createClient from "openapi-fetch"
import type { components, paths } from "./api.ts"

type Member = components["schemas"]["Member"]
type RateLimit = paths["/api/v1/members"]["get"]["responses"][200]["headers"]["RateLimit"]

const [baseUrl, key] = process.argv.slice(2)
if (baseUrl === undefined || key === undefined) throw new Error("usage: program.ts <base URL> <key>")
const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } })

// Create, then list.
const created = await client.POST("/api/v1/members", {
  body: { name: "Acme & Sons, LLC", status: "active", email: "hello@acme.example", slug: "acme-sons" }
})
if (created.data === undefined) throw new Error(`create: ${JSON.stringify(created.error)}`)
const member: Member = created.data.data

const listed = await client.GET("/api/v1/members", { params: { query: { sort: "-created_at", page: 1, status: "active" } } })
if (listed.data === undefined) throw new Error(`list: ${JSON.stringify(listed.error)}`)
const names: Array<string> = listed.data.data.map((m) => m.attributes.name)

// A custom field's value is any JSON value: narrowed before use.
const shown: Array<string> = []
for (const [field, value] of Object.entries(member.attributes.custom_fields)) {
  if (typeof value === "string") shown.push(`${field}=${value.toUpperCase()}`)
}

// The rate-limit fields, typed from the document.
const remaining: RateLimit = listed.response.headers.get("RateLimit") ?? ""
const windows: Array<string> = remaining.split(",").map((w) => w.trim().split(";")[0] ?? "")

// The two 422 shapes: a validation error names its fields, a business rule has a message only.
const invalid = await client.POST("/api/v1/members", { body: { name: "Acme", status: "active", email: "not an address" } })
const invalidFields: Array<string> = invalid.error !== undefined && "errors" in invalid.error ? Object.keys(invalid.error.errors) : []

const invoice = await client.POST("/api/v1/invoices", {
  body: { member_id: member.id, lines: [{ description: "Annual dues", unit: "450.00", quantity: 1 }] }
})
if (invoice.data === undefined) throw new Error(`invoice: ${JSON.stringify(invoice.error)}`)
const draft: string = invoice.data.data.attributes.status
const paid = await client.POST("/api/v1/invoices/{invoice}/payments", {
  params: { path: { invoice: invoice.data.data.id } },
  body: { method: "check", amount: "450.00" }
})
let rule = ""
if (paid.error !== undefined && paid.response.status === 422) {
  rule = "errors" in paid.error ? "validation" : `business rule: ${paid.error.message}`
}

console.log(JSON.stringify({ created: created.response.status, names, shown, windows, invalidFields, draft, rule }))
