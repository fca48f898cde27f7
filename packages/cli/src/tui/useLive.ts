/**
 * Data that keeps itself fresh (docs/admin.md "The screen"): loaded at once and every `everyMs`
 * after the last load ended, never two at a time; a failed load keeps the last data and says
 * why. Input never waits for it.
 */
import { useEffect, useRef, useState } from "react"
import { DataError } from "./AdminData.ts"

export interface Live<A> {
  readonly data: A | undefined
  readonly error: DataError | undefined
}

interface Held<A> extends Live<A> {
  readonly key: string | undefined
}

export const asDataError = (e: unknown): DataError =>
  e instanceof DataError ? e : new DataError("unexpected", e instanceof Error ? e.message : String(e))

/**
 * `load` while `key` is defined; a new key is a new query (its rows start empty), an undefined
 * key pauses (the last rows stay). `refresh` changing reloads now.
 */
export const useLive = <A>(key: string | undefined, load: () => Promise<A>, everyMs: number, refresh: number): Live<A> => {
  const [held, setHeld] = useState<Held<A>>({ key: undefined, data: undefined, error: undefined })
  const loadRef = useRef(load)
  loadRef.current = load
  useEffect(() => {
    if (key === undefined) return
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    setHeld((h) => (h.key === key ? h : { key, data: undefined, error: undefined }))
    const tick = async () => {
      try {
        const data = await loadRef.current()
        if (!stopped) {
          setHeld((h) =>
            h.key === key && h.error === undefined && JSON.stringify(h.data) === JSON.stringify(data) ? h : { key, data, error: undefined }
          )
        }
      } catch (e) {
        if (!stopped) setHeld((h) => ({ key, data: h.key === key ? h.data : undefined, error: asDataError(e) }))
      }
      if (!stopped) timer = setTimeout(tick, everyMs)
    }
    void tick()
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }, [key, refresh, everyMs])
  return key === undefined || held.key === key ? held : { data: undefined, error: undefined }
}
