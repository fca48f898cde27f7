/**
 * Assertions on replies shared by the HTTP suites: the envelopes of docs/api.md "Lists, paging,
 * sorting" and the errors of docs/api.md "Errors".
 */
import { assert } from "@effect/vitest"
import { MemberResource } from "@chamber/core"
import type { Reply } from "./fixture.ts"

/** The member attributes, in the order the resource declares them. */
export const ATTRIBUTE_KEYS: Array<string> = [...MemberResource.keys]

export const assertJson = (reply: Reply) =>
  assert.match(reply.headers["content-type"] ?? "", /^application\/json/, `content-type of a ${reply.status}`)

/** A resource `{id, attributes, created_at, updated_at}` holding exactly the member attributes. */
export const assertMemberResource = (member: any) => {
  assert.deepStrictEqual(Object.keys(member), ["id", "attributes", "created_at", "updated_at"])
  assert.isTrue(Number.isSafeInteger(member.id) && member.id > 0, `id ${member.id}`)
  assert.sameMembers(Object.keys(member.attributes), ATTRIBUTE_KEYS)
  for (const stamp of [member.created_at, member.updated_at]) {
    assert.isString(stamp)
    assert.strictEqual(new Date(stamp).toISOString(), stamp)
  }
}

/** `{data: member}` with no `meta`. */
export const assertSingle = (reply: Reply, status: number) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.body))
  assertJson(reply)
  assert.deepStrictEqual(Object.keys(reply.body), ["data"])
  assertMemberResource(reply.body.data)
  return reply.body.data
}

/** `{data: [...], meta}`. */
export const assertList = (reply: Reply) => {
  assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
  assertJson(reply)
  assert.deepStrictEqual(Object.keys(reply.body).sort(), ["data", "meta"])
  for (const member of reply.body.data) assertMemberResource(member)
}

/** An error answered as exactly `body`, in JSON. */
export const assertError = (reply: Reply, status: number, body: unknown) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.body))
  assertJson(reply)
  assert.deepStrictEqual(reply.body, body)
}

/** A `{message}` error (no `errors`), in JSON. */
export const assertMessageOnly = (reply: Reply, status: number) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.body))
  assertJson(reply)
  assert.deepStrictEqual(Object.keys(reply.body), ["message"])
  assert.isString(reply.body.message)
  assert.isAbove(reply.body.message.length, 0)
}

/**
 * A validation 422 whose failing fields are exactly `fields`; its message is the first error,
 * plus ` (and 1 more error)` or ` (and N more errors)` when there are more (docs/api.md "Errors").
 */
export const assertInvalid = (reply: Reply, fields: ReadonlyArray<string>, label = "") => {
  assert.strictEqual(reply.status, 422, `${label} ${JSON.stringify(reply.body)}`)
  assertJson(reply)
  assert.deepStrictEqual(Object.keys(reply.body).sort(), ["errors", "message"], label)
  assert.sameMembers(Object.keys(reply.body.errors), [...fields], `${label} ${JSON.stringify(reply.body)}`)
  const all: Array<string> = Object.values(reply.body.errors as Record<string, Array<string>>).flat()
  for (const message of all) assert.isString(message)
  const more = all.length - 1
  assert.strictEqual(reply.body.message, all[0] + (more === 1 ? " (and 1 more error)" : more > 1 ? ` (and ${more} more errors)` : ""), label)
  return reply.body.errors as Record<string, Array<string>>
}
