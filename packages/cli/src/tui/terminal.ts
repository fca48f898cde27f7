/**
 * What the terminal can do beyond drawing (docs/admin.md "Minting a key"): whether it takes
 * OSC 52 clipboard writes, asked once before the TUI starts, and the write itself.
 *
 * A terminal that lets programs write its clipboard says so with the extension `52` in its
 * primary device attributes (DA1), as xterm.js, foot, WezTerm, Windows Terminal, mintty and
 * others agreed (contour-terminal/vt-extensions "clipboard-extension"); every terminal answers
 * DA1, so the question never waits long.
 */

/** Sets the clipboard to `text` (OSC 52, the `c` selection). */
export const osc52 = (text: string): string => `\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`

const ASK_DA1 = "\x1b[c"
const DA1 = /\x1b\[\?([0-9;]*)c/

/** True when a DA1 answer lists the clipboard extension, 52. */
export const saysClipboard = (answer: string): boolean => DA1.exec(answer)?.[1]?.split(";").includes("52") === true

export interface TerminalStreams {
  readonly stdin: NodeJS.ReadStream
  readonly stdout: NodeJS.WriteStream
}

/**
 * Asks the terminal for its device attributes and answers whether it takes OSC 52. No answer
 * within `timeoutMs` counts as no. Keys typed meanwhile are handed back to stdin's next reader.
 */
export const clipboardSupport = ({ stdin, stdout }: TerminalStreams, timeoutMs = 1_500): Promise<boolean> =>
  new Promise((resolve) => {
    let heard = ""
    const wasRaw = stdin.isRaw
    const done = (supported: boolean) => {
      clearTimeout(timer)
      stdin.off("data", listen)
      stdin.pause()
      stdin.setRawMode(wasRaw)
      const typed = heard.replace(DA1, "")
      if (typed !== "") stdin.unshift(Buffer.from(typed, "utf8"))
      resolve(supported)
    }
    const listen = (chunk: Buffer | string) => {
      heard += chunk.toString()
      if (DA1.test(heard)) done(saysClipboard(heard))
    }
    const timer = setTimeout(() => done(false), timeoutMs)
    stdin.setRawMode(true)
    stdin.on("data", listen)
    stdin.resume()
    stdout.write(ASK_DA1)
  })
