/**
 * Text from outside made inert in a terminal (docs/cli.md "Text from outside"). What a receiver,
 * an import file or an API client wrote (response excerpts, errors, names, URLs, descriptions...)
 * reaches a terminal with its control characters replaced, each by one visible character of the
 * same width: C0 by its Unicode control picture (ESC `␛`, BEL `␇`, CR `␍`...), DEL by `␡`, C1
 * (U+0080 to U+009F, among them the one-character CSI U+009B and OSC U+009D) by U+FFFD `�`. With
 * no ESC, no C1 and no BEL left, no escape sequence can start: no OSC 52 clipboard write, OSC 8
 * link, OSC 0 title, cursor move or screen clear. Tab and newline are kept only where a layout
 * takes several lines (`"lines"`); a line or a table cell (`"line"`, the default) shows them too.
 *
 * JSON output stays exact JSON: {@link jsonText} writes DEL and C1 as `\u` escapes (JSON.stringify
 * already escapes C0), which decode to the same value.
 */

const ALL_CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g
/** Every control but tab and newline. */
const LAYOUT_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g
const TEXT_CONTROLS = /[\u0000-\u001f\u007f-\u009f]/
/** What JSON.stringify leaves as it is and a terminal acts on. */
const JSON_CONTROLS = /[\u007f-\u009f]/g

/** The visible stand-in of one control character. */
const picture = (control: string): string => {
  const code = control.charCodeAt(0)
  return code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? "\u2421" : "\ufffd"
}

/** `text` with its control characters replaced by visible ones; `"lines"` keeps tab and newline. */
export const inert = (text: string, layout: "line" | "lines" = "line"): string =>
  TEXT_CONTROLS.test(text) ? text.replace(layout === "line" ? ALL_CONTROLS : LAYOUT_CONTROLS, picture) : text

/**
 * `value` with every string in it made inert (as a line), through arrays and the fields of
 * objects (a record's class kept); a value without fields (a Date, a number) as it is. What a
 * command hands to its text rendering, so no field can be forgotten.
 */
export const inertValue = <A>(value: A): A => {
  if (typeof value === "string") return inert(value) as A
  if (Array.isArray(value)) return value.map(inertValue) as A
  if (value !== null && typeof value === "object") {
    const fields = Object.entries(value)
    if (fields.length === 0) return value
    const copy: Record<string, unknown> = Object.create(Object.getPrototypeOf(value))
    for (const [key, field] of fields) copy[inert(key)] = inertValue(field)
    return copy as A
  }
  return value
}

/** JSON text (whose C0 controls JSON.stringify already escaped) with DEL and C1 written as `\u` escapes: the same JSON value, inert in a terminal. */
export const inertJson = (json: string): string =>
  json.replace(JSON_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** JSON.stringify's text made inert ({@link inertJson}). */
export const jsonText = (value: unknown, space?: number): string => inertJson(String(JSON.stringify(value, null, space)))
