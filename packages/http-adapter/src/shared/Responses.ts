/** The answer of one row, `{data: <row>}` (docs/api.md "Lists, paging, sorting"), with an example to show. */
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"

/** `{data: row}`; its example is `example`, else the row's own (every success answer in the document shows one). */
export const single = <S extends Schema.Top>(row: S, example?: S["Type"]) => {
  const shown = example ?? (SchemaAST.resolve(row.ast)?.examples as ReadonlyArray<S["Type"]> | undefined)?.[0]
  if (shown === undefined) throw new Error("single(row): the row's schema has no example; give one")
  const response = Schema.Struct({ data: row })
  // `{data: S["Type"]}` is the struct's Type; TypeScript cannot see it through the generic S.
  return response.annotate({ examples: [{ data: shown } as typeof response.Type] })
}
