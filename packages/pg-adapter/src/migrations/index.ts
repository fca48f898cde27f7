/**
 * The migrations: every numbered file of this folder (`0002_member_fax.ts`), in order. Adding a
 * migration is adding its file; its id is the number and its name the rest (`2_member_fax`).
 */
import type * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { readdirSync } from "node:fs"

const folder = new URL("./", import.meta.url)
const files = readdirSync(folder).filter((file) => /^\d{4}_\w+\.ts$/.test(file)).sort()

export const migrations: Record<string, Effect.Effect<unknown, unknown, SqlClient.SqlClient>> = Object.fromEntries(
  await Promise.all(
    files.map(async (file) => [`${Number(file.slice(0, 4))}_${file.slice(5, -3)}`, (await import(new URL(file, folder).href)).default])
  )
)
