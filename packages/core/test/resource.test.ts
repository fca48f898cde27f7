/** defineResource for the presences members do not use: write-only fields are taken and stored, never shown. */
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { defineResource, Field as F } from "../src/index.ts"

const Note = defineResource("Note", {
  title: F.required(F.filledText(100, "Hello")),
  body: F.writeOnly(F.text(2000, "Internal text")),
  pinned: F.defaulted(F.boolean(false), false)
})

describe("defineResource", () => {
  it("a write-only field is in the payloads and the stored values, not in the attributes or the envelope's example", () => {
    assert.deepStrictEqual(Note.keys, ["title", "pinned"])
    assert.deepStrictEqual(Note.storedKeys, ["title", "body", "pinned"])
    assert.deepStrictEqual(Object.keys(Note.Attributes.fields), ["title", "pinned"])
    assert.deepStrictEqual(Note.example, { title: "Hello", pinned: false })
    assert.deepStrictEqual(Schema.decodeUnknownSync(Note.Create)({ title: "A", body: "secret" }), { title: "A", body: "secret" })
    assert.deepStrictEqual(Schema.decodeUnknownSync(Note.Update)({ body: null }), { body: null })
    assert.deepStrictEqual(Note.defaults({ title: "A" }), { title: "A", body: null, pinned: false })
    assert.deepStrictEqual(Note.changes(Note.defaults({ title: "A", body: "x" }), { body: "y", pinned: null }), { body: "y" })
  })
})
