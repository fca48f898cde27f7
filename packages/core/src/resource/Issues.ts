/**
 * Schema issues as the `errors` map of a 422 (docs/api.md "Errors"): each failing field, by its
 * dotted path (`lines.0.unit`), with our messages. A message's `{field}` becomes the field's
 * name with spaces for underscores ("The employee count field ...", "The unit field ...").
 */
import * as SchemaIssue from "effect/SchemaIssue"

export type FieldErrors = Readonly<Record<string, ReadonlyArray<string>>>

const format = SchemaIssue.makeFormatterStandardSchemaV1()

/** How a message names a field: its last name, not an index (`lines.0.unit` -> "unit"), with spaces for underscores. */
const label = (path: string) => (path.split(".").filter((p) => !/^\d+$/.test(p)).pop() ?? path).replace(/_/g, " ")

const segment = (p: PropertyKey | { readonly key: PropertyKey }) => String(typeof p === "object" && p !== null ? p.key : p)

/** `root` names the value itself when the issue is not about one of its fields (`body`, `query`). */
export const fieldErrors = (issue: SchemaIssue.Issue, root: string): FieldErrors => {
  const errors: Record<string, Array<string>> = {}
  for (const i of format(issue).issues) {
    const path = (i.path ?? []).map(segment).join(".")
    const field = path === "" ? root : path
    let message = i.message
    if (message === "Missing key") message = "The {field} field is required."
    else if (message === "Expected a valid JSON body") message = "The body must be valid JSON."
    else if (path === "" && /^Expected/.test(message)) message = `The ${root} must be a JSON object.`
    message = message.replace(/\{field\}/g, label(field))
    const list = (errors[field] ??= [])
    if (!list.includes(message)) list.push(message)
  }
  return errors
}

/** The first message, plus ` (and 1 more error)` or ` (and N more errors)` when there are more (ruling 7). */
export const summarize = (errors: Readonly<Record<string, ReadonlyArray<string>>>): string => {
  const all = Object.values(errors).flat()
  const rest = all.length - 1
  return (all[0] ?? "The given data was invalid.") + (rest === 1 ? " (and 1 more error)" : rest > 1 ? ` (and ${rest} more errors)` : "")
}
