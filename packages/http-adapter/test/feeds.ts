/**
 * Helpers of the feeds' HTTP suites (docs/api.md "Sponsorships", "Placements", "Bookings"): days
 * around today (UTC), a GET read as its raw JSON text, and the check that a feed shows exactly
 * its attributes and none of the internal values stored with the rows.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"

const DAY = 86_400_000

/** A row of a feed as the JSON reads. */
export interface FeedRow {
  readonly id: number
  readonly attributes: Readonly<Record<string, unknown>>
  readonly created_at: string
  readonly updated_at: string
}

/** A page of a feed as the JSON reads. */
export interface FeedPage {
  readonly data: ReadonlyArray<FeedRow>
  readonly meta: unknown
}

/** The UTC date `offset` days from today, `YYYY-MM-DD`. */
export const day = (offset: number) => new Date(Date.now() + offset * DAY).toISOString().slice(0, 10)

/** The moment `hours` from now, ISO 8601. */
export const hoursFromNow = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString()

/** A GET with `key`: its status, its body as sent, and that body parsed. */
export const getRaw = (path: string, key: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.bearerToken(HttpClientRequest.get(path), key))
    const text = yield* response.text
    const body: FeedPage = JSON.parse(text)
    return { status: response.status, text, body }
  }).pipe(Effect.scoped, Effect.orDie)

/**
 * Every row is `{id, attributes, created_at, updated_at}` with exactly `attributes`; no internal
 * field name appears as a key anywhere in the text, and no internal value at all.
 */
export const assertShowsOnly = (
  reply: { readonly text: string; readonly body: FeedPage },
  attributes: ReadonlyArray<string>,
  hidden: { readonly names: ReadonlyArray<string>; readonly values: ReadonlyArray<string> }
) => {
  assert.deepStrictEqual(Object.keys(reply.body), ["data", "meta"])
  assert.isAbove(reply.body.data.length, 0)
  for (const row of reply.body.data) {
    assert.deepStrictEqual(Object.keys(row), ["id", "attributes", "created_at", "updated_at"])
    assert.deepStrictEqual(Object.keys(row.attributes), attributes)
  }
  for (const name of hidden.names) assert.notInclude(reply.text, `"${name}"`, name)
  for (const value of hidden.values) assert.notInclude(reply.text, value, value)
}
