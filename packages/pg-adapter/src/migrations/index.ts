/** The numbered migrations, in order. Add a file, then a line here. */
import foundation from "./0001_foundation.ts"

export const migrations = {
  "1_foundation": foundation
}
