/** Invoices, their lines, the per-tenant number sequence, and payments (docs/api.md "Invoices", "Payments"). */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE invoices (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      member_id bigint NOT NULL REFERENCES members(id),
      number text,
      status text NOT NULL CHECK (status IN ('draft', 'open', 'paid', 'void', 'uncollectible')),
      currency text NOT NULL,
      subtotal_cents bigint NOT NULL CHECK (subtotal_cents >= 0),
      total_cents bigint NOT NULL CHECK (total_cents >= 0),
      amount_paid_cents bigint NOT NULL DEFAULT 0 CHECK (amount_paid_cents >= 0),
      balance_cents bigint NOT NULL CHECK (balance_cents >= 0),
      issued_at timestamptz,
      due_on date,
      voided_at timestamptz,
      memo text,
      pay_token text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (balance_cents = total_cents - amount_paid_cents),
      CHECK (status <> 'draft' OR number IS NULL)
    )`
  yield* sql`CREATE UNIQUE INDEX invoices_tenant_number ON invoices (tenant_id, number)`
  yield* sql`CREATE INDEX invoices_tenant_issued ON invoices (tenant_id, issued_at DESC NULLS LAST, id DESC)`
  yield* sql`CREATE INDEX invoices_tenant_created ON invoices (tenant_id, created_at, id)`
  yield* sql`
    CREATE TABLE invoice_lines (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      invoice_id bigint NOT NULL REFERENCES invoices(id),
      position integer NOT NULL,
      description text NOT NULL,
      unit_cents bigint NOT NULL CHECK (unit_cents >= 0),
      quantity bigint NOT NULL CHECK (quantity >= 1),
      UNIQUE (invoice_id, position)
    )`
  yield* sql`
    CREATE TABLE invoice_sequences (
      tenant_id bigint PRIMARY KEY REFERENCES tenants(id),
      last_number bigint NOT NULL
    )`
  yield* sql`
    CREATE TABLE payments (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      invoice_id bigint NOT NULL REFERENCES invoices(id),
      member_id bigint NOT NULL REFERENCES members(id),
      method text NOT NULL CHECK (method IN ('card', 'check', 'cash', 'ach', 'comp', 'refund', 'other')),
      gateway text,
      amount_cents bigint NOT NULL CHECK (amount_cents > 0),
      received_on date,
      reference text,
      notes text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX payments_tenant_received ON payments (tenant_id, received_on DESC NULLS LAST, id DESC)`
  yield* sql`CREATE INDEX payments_invoice ON payments (tenant_id, invoice_id)`
})
