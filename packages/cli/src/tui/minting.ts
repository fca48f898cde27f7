/** The mint form's steps (docs/admin.md "Minting a key"): name, chamber_admin, scopes, daily limit, a last look. */
import { READ_SCOPES } from "@chamber/core"
import { clamp, edit, error, info, MAX_DAILY_LIMIT, type MintStep, type Named, type Overlay, run, SCOPES, type Shown, type State } from "./model.ts"

type Minting = Extract<Overlay, { kind: "mint" }>

export const minting = (s: State, o: Minting, input: string, k: Named | undefined, shown: Shown): State => {
  const at = (step: MintStep, more: Partial<Minting> = {}): State => ({ ...s, overlay: { ...o, ...more, step } })
  const back: Readonly<Record<MintStep, MintStep | undefined>> = { name: undefined, as: "name", scopes: "as", limit: "scopes", review: "limit" }
  if (k === "esc") {
    const previous = back[o.step]
    return previous === undefined ? { ...s, overlay: undefined, notice: info("Nothing minted.") } : at(previous)
  }
  const admins = shown.admins ?? []
  switch (o.step) {
    case "name": {
      if (k === "enter") {
        if (o.name.trim() === "") return { ...s, notice: error("Give the key a name, e.g. the integration that will use it.") }
        if (shown.admins !== undefined && admins.length === 0) return { ...s, overlay: undefined, notice: error("Only a chamber_admin may mint, and this chamber has none.") }
        return at("as", { as: Math.max(0, Math.min(o.as, admins.length - 1)) })
      }
      const name = edit(o.name, input, k)
      return name === undefined ? s : at("name", { name: name.slice(0, 255) })
    }
    case "as":
      if (k === "up" || input === "k") return at("as", { as: clamp(o.as - 1, admins.length) })
      if (k === "down" || input === "j") return at("as", { as: clamp(o.as + 1, admins.length) })
      if (k !== "enter") return s
      if (shown.admins === undefined) return { ...s, notice: info("Still loading the chamber's admins: press enter again in a moment.") }
      if (admins.length === 0) return { ...s, overlay: undefined, notice: error("Only a chamber_admin may mint, and this chamber has none.") }
      return at("scopes", { as: clamp(o.as, admins.length) })
    case "scopes": {
      if (k === "up" || input === "k") return at("scopes", { cursor: clamp(o.cursor - 1, SCOPES.length) })
      if (k === "down" || input === "j") return at("scopes", { cursor: clamp(o.cursor + 1, SCOPES.length) })
      if (k === "pgup" || k === "home") return at("scopes", { cursor: 0 })
      if (k === "pgdn" || k === "end") return at("scopes", { cursor: SCOPES.length - 1 })
      if (input === " ") {
        const scope = SCOPES[o.cursor]!
        const scopes = o.scopes.includes(scope) ? o.scopes.filter((x) => x !== scope) : [...o.scopes, scope]
        return at("scopes", { scopes: SCOPES.filter((x) => scopes.includes(x)) })
      }
      if (input === "r") return at("scopes", { scopes: READ_SCOPES })
      if (input === "a") return at("scopes", { scopes: SCOPES })
      if (input === "n") return at("scopes", { scopes: [] })
      if (k === "enter") return o.scopes.length === 0 ? { ...s, notice: error("Choose at least one scope: a key without scopes can do nothing.") } : at("limit")
      return s
    }
    case "limit": {
      if (k === "enter") {
        const limit = Number(o.limit)
        if (!/^\d+$/.test(o.limit) || limit < 1 || limit > MAX_DAILY_LIMIT) {
          return { ...s, notice: error(`The daily limit is a whole number from 1 to ${MAX_DAILY_LIMIT}.`) }
        }
        return at("review")
      }
      const limit = edit(o.limit, input.replace(/\D/g, ""), k)
      return limit === undefined ? s : at("limit", { limit: limit.slice(0, 10) })
    }
    case "review":
      if (input === "y" || input === "Y" || k === "enter") {
        return run({ ...s, overlay: o }, {
          kind: "mint",
          request: { tenant: s.tenant ?? "", asEmail: admins[o.as] ?? "", name: o.name.trim(), scopes: o.scopes, dailyLimit: Number(o.limit) }
        })
      }
      if (input === "n" || input === "N") return { ...s, overlay: undefined, notice: info("Nothing minted.") }
      return s
  }
}
