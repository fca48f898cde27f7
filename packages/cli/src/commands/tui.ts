/**
 * `chamber tui [--tenant ID]` (docs/admin.md): the admin dashboard in the terminal, on the
 * alternate screen, over the configured storage (through the server's socket while `serve` runs
 * on the embedded database).
 */
import { createElement as h } from "react"
import { databaseConfigFromEnv } from "@chamber/pg-adapter"
import { fail } from "../Output.ts"
import { rateLimitSettingsFromEnv } from "../RateLimits.ts"
import { adminDataLive } from "../tui/AdminDataLive.ts"

const ENTER_ALTERNATE_SCREEN = "\x1b[?1049h\x1b[H"
const LEAVE_ALTERNATE_SCREEN = "\x1b[?1049l"

export const tui = async (opts: { readonly tenant?: string; readonly json?: boolean }) => {
  if (opts.json === true) {
    return fail(true, "chamber tui is interactive and has no JSON output: use key list, hooks list or deliveries list --json.")
  }
  if (process.stdout.isTTY !== true || process.stdin.isTTY !== true) {
    return fail(false, "chamber tui needs a terminal (stdin and stdout): for scripts, use key list, hooks list or deliveries list.")
  }
  let settings, config
  try {
    settings = rateLimitSettingsFromEnv()
    config = databaseConfigFromEnv()
  } catch (error) {
    return fail(false, error)
  }
  const data = adminDataLive(config, settings)
  // ink draws nothing but the last frame when it sees CI set; on a terminal a person is at it.
  delete process.env.CI
  delete process.env.CONTINUOUS_INTEGRATION
  const [{ render }, { App }, { Boundary }, { clipboardSupport }] = await Promise.all([
    import("ink"),
    import("../tui/App.ts"),
    import("../tui/Boundary.ts"),
    import("../tui/terminal.ts")
  ])
  const leave = () => process.stdout.write(LEAVE_ALTERNATE_SCREEN)
  // Whatever escapes is said in one line, on the normal screen, never as a stack trace.
  const crash = (error: unknown) => {
    leave()
    fail(false, error)
  }
  process.on("uncaughtException", crash)
  process.on("unhandledRejection", crash)
  process.stdout.write(ENTER_ALTERNATE_SCREEN)
  const clipboard = await clipboardSupport({ stdin: process.stdin, stdout: process.stdout })
  // ink's incremental rendering (6.8) draws each frame a line lower when a frame ends with a
  // newline, as ours do: the whole frame is redrawn instead, inside a synchronized update.
  const app = render(h(Boundary, null, h(App, { data, tenant: opts.tenant, clipboard })), { exitOnCtrlC: true })
  // A terminal closed or a kill: the same way out as q (the screen given back, the database closed).
  for (const signal of ["SIGTERM", "SIGHUP"] as const) process.on(signal, () => app.unmount())
  await app.waitUntilExit().catch(() => undefined)
  leave()
  await data.close().catch(() => undefined)
  process.exit(0)
}
