/**
 * Rows an import has written and not yet published (migration 0025, docs/architecture.md "On the
 * embedded database: slices under a hold"). Where imports are written in slices, every read of a
 * table an import writes shows a row only when it has no hold, when its hold is gone, or to the
 * slices of the import that holds it; a chamber's feed stops below the first open hold's fence.
 * Elsewhere (PostgreSQL, where an import is one transaction) no row is ever held and reads carry no
 * such test.
 */
import * as Context from "effect/Context"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"

/** True where imports are written in slices: the embedded database, whose one session no import may hold for long. */
export const ImportSlices = Context.Reference<boolean>("chamber/ImportSlices", { defaultValue: () => false })

/** The import whose slice this transaction is (its `chamber.hold`), if any. */
const OWN_HOLD = `nullif(current_setting('chamber.hold', true), '')::bigint`

/**
 * `alias`'s row may be shown: the test a read ANDs into its WHERE (an empty string where rows
 * are never held). The holds are read once per statement (an uncorrelated subquery).
 */
export const shownRow = (sliced: boolean, alias: string): string =>
  sliced
    ? `(${alias}.held_by IS NULL OR ${alias}.held_by NOT IN (SELECT h.id FROM import_holds h WHERE h.id IS DISTINCT FROM ${OWN_HOLD}))`
    : ""

/** ` AND` the shown test of `alias`, to append to a WHERE or a join's ON; nothing where rows are never held. */
export const andShownRow = (sliced: boolean, alias: string): string => (sliced ? ` AND ${shownRow(true, alias)}` : "")

/**
 * `alias`'s webhook delivery may be shown: its event may be. A delivery is held with its event
 * (the table carries no mark of its own, so its rows stay as narrow as the relay reads them).
 */
export const shownDelivery = (sliced: boolean, alias: string): string =>
  sliced ? `EXISTS (SELECT 1 FROM outbox_events he WHERE he.id = ${alias}.event_id AND ${shownRow(true, "he")})` : ""

/** ` AND` the shown test of `alias`'s webhook delivery; nothing where rows are never held. */
export const andShownDelivery = (sliced: boolean, alias: string): string => (sliced ? ` AND ${shownDelivery(true, alias)}` : "")

/**
 * ` AND` a bound on `position`: while an import of the chamber is open, its feed reads no further
 * than the import's fence, so a reader never passes an event that is yet to be shown.
 */
export const feedFence = (sql: SqlClient.SqlClient, sliced: boolean, tenantId: number): Statement.Fragment =>
  sliced
    ? sql` AND position <= coalesce((SELECT min(h.fence) FROM import_holds h WHERE h.tenant_id = ${tenantId} AND h.id IS DISTINCT FROM ${
      sql.literal(OWN_HOLD)
    }), position)`
    : sql``
