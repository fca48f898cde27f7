/**
 * The admin TUI mounted with ink-testing-library: keys to press, the frame as plain text, and
 * waiting for the screen to show something (data loads asynchronously).
 */
import { render } from "ink-testing-library"
import { createElement as h } from "react"
import type { AdminData } from "../../src/tui/AdminData.ts"
import { App, type AppProps } from "../../src/tui/App.ts"
import { NOW } from "./fixture.ts"

export const KEY = {
  esc: "\u001B",
  enter: "\r",
  tab: "\t",
  backtab: "\u001B[Z",
  up: "\u001B[A",
  down: "\u001B[B",
  pgup: "\u001B[5~",
  pgdn: "\u001B[6~",
  backspace: "\x7f",
  space: " "
} as const

/** Colours and cursor moves (CSI), and operating system commands such as OSC 52 (the clipboard). */
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface Mounted {
  /** The last frame, without colours. */
  readonly frame: () => string
  /** Every frame drawn so far, without colours. */
  readonly frames: () => ReadonlyArray<string>
  /** Everything written to the terminal so far, escape sequences included. */
  readonly output: () => string
  /** Presses keys one after another, letting the screen catch up after each. */
  readonly press: (...keys: ReadonlyArray<string>) => Promise<void>
  /** Writes `text` to stdin at once, as a paste or a fast typist would. */
  readonly type: (text: string) => Promise<void>
  /** Resolves with the frame once it contains `text` (or matches); fails after `timeoutMs` showing the frame. */
  readonly until: (text: string | RegExp, timeoutMs?: number) => Promise<string>
  /** Resolves once the frame no longer contains `text`. */
  readonly gone: (text: string | RegExp, timeoutMs?: number) => Promise<string>
  /** True once the app has exited (q). */
  readonly exited: () => boolean
  readonly unmount: () => void
}

const has = (frame: string, text: string | RegExp) => (typeof text === "string" ? frame.includes(text) : text.test(frame))

export const mount = (data: AdminData, props: Partial<AppProps> = {}): Mounted => {
  const app = render(h(App, { data, now: () => NOW, refreshMs: 60_000, width: 80, height: 23, ...props }))
  const frame = () => (app.lastFrame() ?? "").replace(ANSI, "")
  const wait = async (test: () => boolean, what: string, timeoutMs: number) => {
    const started = Date.now()
    while (!test()) {
      if (Date.now() - started > timeoutMs) throw new Error(`${what} within ${timeoutMs} ms; the screen:\n${frame()}`)
      await pause(10)
    }
    return frame()
  }
  return {
    frame,
    frames: () => app.frames.map((f) => f.replace(ANSI, "")),
    output: () => app.frames.join(""),
    press: async (...keys) => {
      for (const key of keys) {
        app.stdin.write(key)
        await pause(key === KEY.esc ? 25 : 15)
      }
    },
    type: async (text) => {
      app.stdin.write(text)
      await pause(15)
    },
    until: (text, timeoutMs = 10_000) => wait(() => has(frame(), text), `no ${String(text)} on the screen`, timeoutMs),
    gone: (text, timeoutMs = 10_000) => wait(() => !has(frame(), text), `${String(text)} still on the screen`, timeoutMs),
    exited: () => app.stdin.listenerCount("readable") === 0,
    unmount: () => app.unmount()
  }
}

/** Resolves once `test` holds; fails after `timeoutMs`. */
export const eventually = async (test: () => boolean, timeoutMs = 10_000): Promise<void> => {
  const started = Date.now()
  while (!test()) {
    if (Date.now() - started > timeoutMs) throw new Error(`still not so after ${timeoutMs} ms`)
    await pause(10)
  }
}

/** Every line of the frame fits `width` cells, and there are at most `height` lines. */
export const fits = (frame: string, width: number, height: number): boolean => {
  const lines = frame.split("\n")
  return lines.length <= height && lines.every((l) => [...l].length <= width)
}
