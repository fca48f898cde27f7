/**
 * The screens docs/admin.md shows, rendered by the TUI itself from the fixture's chamber at a
 * fixed time: each capture is a name, a terminal size and the keys that lead to it.
 * captures.test.ts checks that the docs still match; to refresh the docs after changing the
 * screens, run `node packages/cli/test/tui/captures.ts --write`.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { backedUp, fake, type Fake, RIVERSIDE } from "./fixture.ts"
import { KEY, mount } from "./screen.ts"

export const DOC = fileURLToPath(new URL("../../../../docs/admin.md", import.meta.url))

export interface Capture {
  readonly name: string
  readonly width: number
  /** Terminal rows: the TUI draws one line fewer. */
  readonly rows: number
  readonly tenant?: string
  /** The terminal takes OSC 52 clipboard writes. */
  readonly clipboard?: boolean
  /** Keys to press, in order; a function is a step done to the data (e.g. the relay delivering); `until` waits for the screen. */
  readonly steps: ReadonlyArray<string | ((data: Fake) => void) | { readonly until: string | RegExp }>
  /** What the screen shows once the capture is ready. */
  readonly ready: string | RegExp
}

const typed = (text: string) => [...text]
const admins = { until: "› ann.lee@riversidechamber.example" }
const hooks = { until: "old-site" }
const mint = ["n", ...typed("Newsletter tool"), KEY.enter, admins]

export const CAPTURES: ReadonlyArray<Capture> = [
  { name: "chambers", width: 80, rows: 10, steps: [], ready: "Choose a chamber · 2" },
  { name: "keys", width: 80, rows: 12, tenant: RIVERSIDE, steps: [], ready: "Old website" },
  { name: "mint-name", width: 80, rows: 10, tenant: RIVERSIDE, steps: ["n", ...typed("Newsletter tool")], ready: "Newsletter tool█" },
  { name: "mint-as", width: 80, rows: 12, tenant: RIVERSIDE, steps: mint, ready: "Minted by" },
  { name: "mint-scopes", width: 80, rows: 24, tenant: RIVERSIDE, steps: [...mint, KEY.enter, "r", KEY.down, KEY.space], ready: "[x] members:write" },
  { name: "mint-review", width: 80, rows: 15, tenant: RIVERSIDE, steps: [...mint, KEY.enter, "r", KEY.down, KEY.space, KEY.enter, KEY.enter], ready: "Mint this key? y/n" },
  { name: "minted", width: 80, rows: 14, tenant: RIVERSIDE, steps: [...mint, KEY.enter, "r", KEY.enter, KEY.enter, "y"], ready: /4 keys[\s\S]*Copy it now/ },
  { name: "minted-copied", width: 80, rows: 14, tenant: RIVERSIDE, clipboard: true, steps: [...mint, KEY.enter, "r", KEY.enter, KEY.enter, "y"], ready: /4 keys[\s\S]*Copied to your clipboard/ },
  { name: "revoke", width: 80, rows: 12, tenant: RIVERSIDE, steps: [KEY.down, "d"], ready: "y/n" },
  { name: "subscriptions", width: 80, rows: 12, tenant: RIVERSIDE, steps: ["2"], ready: "old-site" },
  { name: "subscriptions-wide", width: 120, rows: 10, tenant: RIVERSIDE, steps: ["2"], ready: "old-site" },
  { name: "deliveries-failed", width: 80, rows: 12, tenant: RIVERSIDE, steps: ["3", "f"], ready: "Deliveries · failed" },
  { name: "attempts", width: 80, rows: 14, tenant: RIVERSIDE, steps: ["3", "f", KEY.enter], ready: "Delivery 812" },
  { name: "replay-ask", width: 80, rows: 12, tenant: RIVERSIDE, steps: ["3", "f", "p"], ready: "y/n" },
  { name: "attempts-replayed", width: 80, rows: 14, tenant: RIVERSIDE, steps: ["3", "f", KEY.enter, "p", "y"], ready: "pending · 0 tries" },
  { name: "replay-waiting", width: 80, rows: 12, tenant: RIVERSIDE, steps: ["3", KEY.down, KEY.down, "p", "y"], ready: "waiting to be sent" },
  { name: "replay-delivered", width: 80, rows: 12, tenant: RIVERSIDE, steps: ["3", KEY.down, KEY.down, "p", "y", (d) => d.settle(812, true), "r"], ready: "delivered (200" },
  { name: "replay-subscription", width: 80, rows: 12, tenant: RIVERSIDE, steps: ["2", hooks, "3", "h", "h", "P"], ready: "y/n" },
  { name: "replay-since", width: 80, rows: 12, tenant: RIVERSIDE, steps: ["3", "S", ...typed("8h")], ready: "8h█" },
  { name: "reactivate", width: 80, rows: 12, tenant: RIVERSIDE, steps: ["2", "G", "a"], ready: "y/n" },
  { name: "reactivated", width: 80, rows: 12, tenant: RIVERSIDE, steps: ["2", "G", "a", "y"], ready: /3 subscriptions · recent[\s\S]*Reactivated 1 subscription/ },
  { name: "backlog", width: 80, rows: 10, tenant: RIVERSIDE, steps: [backedUp, "4"], ready: "old-site" },
  { name: "help", width: 80, rows: 24, tenant: RIVERSIDE, steps: ["?"], ready: "All keys" },
  { name: "database-down", width: 80, rows: 14, tenant: RIVERSIDE, steps: ["3", (d) => void (d.down = true), "r"], ready: "does not answer" },
  { name: "narrow", width: 60, rows: 12, tenant: RIVERSIDE, steps: ["3"], ready: "invoice.paid" }
]

/** A capture as the TUI draws it now: trailing spaces dropped. */
export const render = async (capture: Capture): Promise<string> => {
  const data = fake()
  const screen = mount(data, { tenant: capture.tenant, width: capture.width, height: capture.rows - 1, refreshMs: 2_000, clipboard: capture.clipboard === true })
  try {
    await screen.until(capture.tenant === undefined ? "Choose a chamber" : "Zapier")
    for (const step of capture.steps) {
      if (typeof step === "string") await screen.press(step)
      else if (typeof step === "function") step(data)
      else await screen.until(step.until)
      await new Promise((r) => setTimeout(r, 20))
    }
    const frame = await screen.until(capture.ready)
    return frame.split("\n").map((l) => l.trimEnd()).join("\n")
  } finally {
    screen.unmount()
  }
}

/** docs/admin.md marks each capture: `<!-- capture: NAME -->` on the line before its ```text block. */
const BLOCK = /<!-- capture: ([\w-]+) -->\n```text\n([\s\S]*?)```/g

export const documented = (doc: string): ReadonlyMap<string, string> => new Map([...doc.matchAll(BLOCK)].map((m) => [m[1]!, m[2]!.replace(/\n$/, "")]))

export const withCaptures = (doc: string, frames: ReadonlyMap<string, string>): string =>
  doc.replace(BLOCK, (whole, name: string) => (frames.has(name) ? `<!-- capture: ${name} -->\n\`\`\`text\n${frames.get(name)}\n\`\`\`` : whole))

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--write")) {
  const frames = new Map<string, string>()
  for (const capture of CAPTURES) frames.set(capture.name, await render(capture))
  const doc = readFileSync(DOC, "utf8")
  const missing = CAPTURES.filter((c) => !documented(doc).has(c.name)).map((c) => c.name)
  writeFileSync(DOC, withCaptures(doc, frames))
  console.log(`docs/admin.md: ${frames.size - missing.length} captures written${missing.length > 0 ? `; not in the doc: ${missing.join(", ")}` : ""}`)
  process.exit(0)
}
