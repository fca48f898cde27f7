/**
 * Sponsorships, advertising placements and bookings (docs/api.md "Sponsorships", "Placements",
 * "Bookings"): the tables, and one view per resource giving exactly what the API shows.
 *
 * Placements are the rows of `sponsorships` of kind `ad`; the sponsorships feed lists kinds
 * tier and logo_wall. The views compute the derived attributes when read, so they never go
 * stale: `member_name` and `booking_type_name` are the current names of the referenced member
 * and booking type (joined within the tenant, hence null when there is none), and `ctr` is
 * clicks / impressions as a float8 (0 without impressions). They leave out every internal column
 * (amounts, invoice ids, notes, the kind, visitor details, cancel tokens), so nothing read through
 * them can show one. A migration that adds an attribute replaces its view.
 *
 * `invoice_id` is a plain column: invoices arrive in a migration of their own.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE sponsorships (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      kind text NOT NULL DEFAULT 'tier' CHECK (kind IN ('tier', 'logo_wall', 'ad')),
      member_id bigint REFERENCES members(id),
      name text,
      status text NOT NULL CHECK (status IN ('pending', 'active', 'fulfilled', 'cancelled')),
      starts_on date,
      ends_on date,
      sponsorship_package_id bigint,
      tier text,
      event_id bigint REFERENCES events(id),
      ad_slot text,
      ad_kind text CHECK (ad_kind IN ('image', 'text')),
      ad_headline text,
      ad_body text,
      ad_cta_label text,
      ad_link_url text,
      ad_image_url text,
      is_house_ad boolean NOT NULL DEFAULT false,
      is_included_benefit boolean NOT NULL DEFAULT false,
      impressions bigint NOT NULL DEFAULT 0,
      clicks bigint NOT NULL DEFAULT 0,
      amount_cents bigint,
      invoice_id bigint,
      notes text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (kind <> 'ad' OR ad_kind IS NOT NULL)
    )`
  // The default orders of the two feeds, over the rows they can list.
  yield* sql`
    CREATE INDEX sponsorships_tenant_live ON sponsorships (tenant_id, starts_on DESC NULLS LAST, id DESC)
    WHERE kind IN ('tier', 'logo_wall') AND status = 'active'`
  yield* sql`
    CREATE INDEX placements_tenant_live ON sponsorships (tenant_id, starts_on DESC NULLS LAST, id DESC)
    WHERE kind = 'ad' AND status = 'active'`
  yield* sql`
    CREATE VIEW sponsorships_shown AS
    SELECT s.id, s.tenant_id, s.member_id, m.name AS member_name, s.name, s.status, s.starts_on, s.ends_on,
           s.sponsorship_package_id, s.tier, s.event_id, s.created_at, s.updated_at
    FROM sponsorships s
    LEFT JOIN members m ON m.tenant_id = s.tenant_id AND m.id = s.member_id
    WHERE s.kind IN ('tier', 'logo_wall')`
  yield* sql`
    CREATE VIEW placements_shown AS
    SELECT p.id, p.tenant_id, p.member_id, p.ad_slot, p.ad_kind, p.ad_headline, p.ad_body, p.ad_cta_label, p.ad_link_url,
           p.ad_image_url, p.is_house_ad, p.is_included_benefit, p.starts_on, p.ends_on, p.status, p.impressions, p.clicks,
           CASE WHEN p.impressions > 0 THEN p.clicks::float8 / p.impressions ELSE 0::float8 END AS ctr,
           p.created_at, p.updated_at
    FROM sponsorships p
    WHERE p.kind = 'ad'`

  yield* sql`
    CREATE TABLE booking_types (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, name)
    )`
  yield* sql`
    CREATE TABLE bookings (
      id bigserial PRIMARY KEY,
      tenant_id bigint NOT NULL REFERENCES tenants(id),
      booking_type_id bigint NOT NULL REFERENCES booking_types(id),
      starts_at timestamptz,
      ends_at timestamptz,
      status text NOT NULL CHECK (status IN ('confirmed', 'cancelled')),
      cancelled_at timestamptz,
      member_id bigint REFERENCES members(id),
      contact_id bigint REFERENCES contacts(id),
      visitor_name text,
      visitor_email text,
      visitor_phone text,
      notes text,
      location text,
      cancel_token text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  // The default order of the bookings feed, over the rows it can list.
  yield* sql`CREATE INDEX bookings_tenant_upcoming ON bookings (tenant_id, starts_at, id) WHERE status = 'confirmed'`
  yield* sql`
    CREATE VIEW bookings_shown AS
    SELECT b.id, b.tenant_id, b.booking_type_id, t.name AS booking_type_name, b.starts_at, b.ends_at, b.status,
           b.cancelled_at, b.member_id, b.contact_id, b.created_at, b.updated_at
    FROM bookings b
    LEFT JOIN booking_types t ON t.tenant_id = b.tenant_id AND t.id = b.booking_type_id`
})
