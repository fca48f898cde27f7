/**
 * The two rolling windows of one API key (docs/operations.md "Rate limits"), exact in the sense
 * the spec promises: never more than `perMinute` admitted in any 60 s, nor more than `daily` in
 * any 24 h. Memory per key is bounded: the minute keeps the times of at most `perMinute`
 * admissions (only the last `perMinute` can decide the next one); the day keeps one bucket per
 * minute (at most 1,441) holding a count and the time of its latest admission. A bucket leaves the
 * day whole, 24 h after that latest admission, so a request counts against the day for at least
 * 24 h and at most 24 h + 1 min: the ceiling is never exceeded, and quota comes back up to a
 * minute late. The Redis script (redis-adapter) is the same algorithm; both pass one contract suite.
 */

export const MINUTE_MS = 60_000
export const DAY_MS = 86_400_000

export interface Limits {
  readonly perMinute: number
  readonly daily: number
}

/** One window after a request: how much is used, and when more quota is back. */
export interface WindowUse {
  readonly limit: number
  readonly used: number
  /** Milliseconds until the oldest counted request leaves (0 when none is counted). */
  readonly backInMs: number
}

export interface Verdict {
  readonly admitted: boolean
  readonly minute: WindowUse
  readonly day: WindowUse
  /** Refused: milliseconds until a request would be admitted (when nothing else is admitted meanwhile). */
  readonly retryAfterMs: number
}

/** Whole seconds, rounded up, so waiting that long is always enough. */
export const wholeSeconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1000))

/** The day's count of one minute, and its latest admission. */
export interface Bucket {
  readonly minute: number
  count: number
  last: number
}

/** The windows of one key: `hit` is check-and-count; `peek` only reads. */
export class KeyWindows {
  /** Admission times, oldest first, from `head` on. */
  private log: Array<number> = []
  private head = 0
  private day: Array<Bucket> = []
  private dayHead = 0
  private total = 0
  private latest = 0

  /** The time the windows are judged at: never earlier than a time already counted. */
  private at(now: number): number {
    return Math.max(now, this.latest)
  }

  private prune(now: number, perMinute: number): void {
    while (this.head < this.log.length && this.log[this.head]! + MINUTE_MS <= now) this.head++
    // Only the last `perMinute` admissions can decide the next one.
    if (this.log.length - this.head > perMinute) this.head = this.log.length - perMinute
    if (this.head > 64 && this.head * 2 > this.log.length) {
      this.log = this.log.slice(this.head)
      this.head = 0
    }
    while (this.dayHead < this.day.length && this.day[this.dayHead]!.last + DAY_MS <= now) {
      this.total -= this.day[this.dayHead]!.count
      this.dayHead++
    }
    if (this.dayHead > 64 && this.dayHead * 2 > this.day.length) {
      this.day = this.day.slice(this.dayHead)
      this.dayHead = 0
    }
  }

  hit(now: number, limits: Limits): Verdict {
    const t = this.at(now)
    this.prune(t, limits.perMinute)
    const admitted = this.log.length - this.head < limits.perMinute && this.total < limits.daily
    if (admitted) {
      this.log.push(t)
      const minute = Math.floor(t / MINUTE_MS)
      const tail = this.day.length > this.dayHead ? this.day[this.day.length - 1]! : undefined
      if (tail !== undefined && tail.minute >= minute) {
        tail.count++
        tail.last = t
      } else {
        this.day.push({ minute, count: 1, last: t })
      }
      this.total++
      this.latest = t
    }
    return this.verdict(t, limits, admitted)
  }

  peek(now: number, limits: Limits): Verdict {
    const t = this.at(now)
    this.prune(t, limits.perMinute)
    return this.verdict(t, limits, this.log.length - this.head < limits.perMinute && this.total < limits.daily)
  }

  /** The day's buckets, oldest first: what a restart needs to go on counting. */
  saved(): ReadonlyArray<Bucket> {
    return this.day.slice(this.dayHead).map((b) => ({ ...b }))
  }

  /**
   * Windows rebuilt from saved buckets. The minute's admissions are taken to be at their bucket's
   * latest time (at most `perMinute` of them): never earlier than they were, so nothing saved
   * lets more through than the windows it came from would.
   */
  static restore(saved: ReadonlyArray<Bucket>, perMinute: number): KeyWindows {
    const windows = new KeyWindows()
    for (const b of saved) {
      windows.day.push({ ...b })
      windows.total += b.count
      windows.latest = Math.max(windows.latest, b.last)
    }
    const recent = saved.filter((b) => b.last + MINUTE_MS > windows.latest)
    for (const b of recent) for (let i = 0; i < Math.min(b.count, perMinute); i++) windows.log.push(b.last)
    if (windows.log.length > perMinute) windows.log = windows.log.slice(windows.log.length - perMinute)
    return windows
  }

  /** Nothing counted any more: the key's state can be dropped. */
  idle(now: number): boolean {
    return this.latest + DAY_MS <= now
  }

  private verdict(t: number, limits: Limits, admitted: boolean): Verdict {
    const minuteUsed = this.log.length - this.head
    const minute: WindowUse = {
      limit: limits.perMinute,
      used: minuteUsed,
      backInMs: minuteUsed === 0 ? 0 : this.log[this.head]! + MINUTE_MS - t
    }
    const oldest = this.day[this.dayHead]
    const day: WindowUse = { limit: limits.daily, used: this.total, backInMs: oldest === undefined ? 0 : oldest.last + DAY_MS - t }
    if (admitted) return { admitted, minute, day, retryAfterMs: 0 }
    let wait = 0
    if (minuteUsed >= limits.perMinute) {
      // The admission that must leave so that fewer than perMinute remain.
      wait = this.log[this.log.length - limits.perMinute]! + MINUTE_MS - t
    }
    if (this.total >= limits.daily) {
      let left = this.total
      for (let i = this.dayHead; i < this.day.length; i++) {
        left -= this.day[i]!.count
        if (left < limits.daily) {
          wait = Math.max(wait, this.day[i]!.last + DAY_MS - t)
          break
        }
      }
    }
    return { admitted, minute, day, retryAfterMs: wait }
  }
}
