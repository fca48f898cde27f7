/** Import documents the import suites share (core's Importer, `chamber import`). */

/** 10,000 records (9,995 members, 5 contacts) with three bad ones: a status, an email, a ref. */
export const tenThousand = () => {
  const members: Array<Record<string, unknown>> = Array.from({ length: 9_995 }, (_, i) => ({ ref: `m${i}`, name: `Member ${i}`, status: "active", email: `m${i}@example.com` }))
  const contacts: Array<Record<string, unknown>> = Array.from({ length: 5 }, (_, i) => ({ first_name: "Ann", last_name: `Lee ${i}`, member_ref: `m${i}` }))
  members[2]!.status = "retired"
  members[9_990]!.email = "not-an-email"
  contacts[3]!.member_ref = "m10001"
  return { members, contacts }
}
