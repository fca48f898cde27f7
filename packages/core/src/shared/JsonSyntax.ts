/**
 * Where a JSON text stops being JSON (RFC 8259), said for people: what was expected and the line
 * and column (counted in characters, from 1). The API's 422 for a malformed body and `chamber
 * import` for a malformed file both say it (docs/api.md "Errors", docs/cli.md "Import"). Only
 * asked once JSON.parse has refused the text, whose own messages have no position for some
 * mistakes and quote the text for others.
 */

export interface JsonSyntaxError {
  readonly line: number
  readonly column: number
  /** What is wrong there: "expected ':' after the property name". */
  readonly reason: string
}

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d])
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"])
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
const HEX4 = /[0-9a-fA-F]{4}/y
const hex4At = (text: string, at: number) => {
  HEX4.lastIndex = at
  return HEX4.test(text)
}

/** Line and column of the UTF-16 offset `at`, the column in characters (code points). */
const position = (text: string, at: number) => {
  const lineStart = text.lastIndexOf("\n", at - 1) + 1
  let line = 1
  for (let i = text.indexOf("\n"); i !== -1 && i < at; i = text.indexOf("\n", i + 1)) line++
  let column = 1
  for (let i = lineStart; i < at; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < at) i++
    column++
  }
  return { line, column }
}

/** The first place `text` breaks the JSON grammar, or undefined when it is JSON. */
export const jsonSyntaxError = (text: string): JsonSyntaxError | undefined => {
  let i = 0
  const open: Array<"{" | "["> = []
  const fail = (reason: string): JsonSyntaxError => ({ ...position(text, i), reason })
  const skip = () => {
    while (i < text.length && WHITESPACE.has(text.charCodeAt(i))) i++
  }
  /** From the opening quote to past the closing one; a reason when the string is broken. */
  const string = (): string | undefined => {
    i++
    for (;;) {
      if (i >= text.length) return "the text ends inside a string"
      const c = text[i]!
      if (c === '"') {
        i++
        return undefined
      }
      if (c === "\\") {
        const next = text[i + 1]
        if (next !== undefined && ESCAPES.has(next)) i += 2
        else if (next === "u" && hex4At(text, i + 2)) i += 6
        else return "a backslash in a string must start an escape such as \\n, \\\" or \\u00e9"
      } else if (text.charCodeAt(i) < 0x20) {
        return "a control character (a tab or a line break) in a string must be escaped"
      } else i++
    }
  }

  let state: "value" | "after" | "key" = "value"
  for (;;) {
    skip()
    if (state === "value") {
      if (i >= text.length) return fail("the text ends where a JSON value was expected")
      const c = text[i]!
      if (c === "{" || c === "[") {
        i++
        skip()
        if (text[i] === (c === "{" ? "}" : "]")) {
          i++
          state = "after"
        } else {
          open.push(c)
          state = c === "{" ? "key" : "value"
        }
      } else if (c === '"') {
        const broken = string()
        if (broken !== undefined) return fail(broken)
        state = "after"
      } else if (c === "-" || (c >= "0" && c <= "9")) {
        NUMBER.lastIndex = i
        const match = NUMBER.exec(text)
        if (match === null) return fail("a number must have digits after its minus sign")
        const zero = match[0] === "0" || match[0] === "-0"
        if (zero && text[i + match[0].length] !== undefined && /[0-9]/.test(text[i + match[0].length]!)) {
          return fail("a number must not begin with 0")
        }
        i += match[0].length
        state = "after"
      } else {
        const literal = ["true", "false", "null"].find((word) => text.startsWith(word, i))
        if (literal === undefined) return fail("expected a JSON value")
        i += literal.length
        state = "after"
      }
    } else if (state === "key") {
      if (i >= text.length) return fail("the text ends where a property name was expected")
      if (text[i] !== '"') return fail("expected a property name in double quotes")
      const broken = string()
      if (broken !== undefined) return fail(broken)
      skip()
      if (i >= text.length) return fail("the text ends where ':' was expected")
      if (text[i] !== ":") return fail("expected ':' after the property name")
      i++
      state = "value"
    } else {
      const container = open.at(-1)
      if (container === undefined) return i < text.length ? fail("unexpected text after the JSON value") : undefined
      const close = container === "{" ? "}" : "]"
      if (i >= text.length) return fail(`the text ends before the ${container === "{" ? "object" : "array"} is closed with '${close}'`)
      if (text[i] === ",") {
        i++
        state = container === "{" ? "key" : "value"
      } else if (text[i] === close) {
        i++
        open.pop()
      } else {
        return fail(container === "{" ? "expected ',' or '}' after a property value" : "expected ',' or ']' after an array item")
      }
    }
  }
}

/** "expected ':' after the property name at line 1, column 29", or a plain reason when `text` is JSON after all. */
export const describeJsonSyntax = (text: string): string => {
  const error = jsonSyntaxError(text)
  return error === undefined ? "it could not be read" : `${error.reason} at line ${error.line}, column ${error.column}`
}
