/**
 * Standby sandboxes: a few sandboxes started ahead of need, each for one exact sandbox specification
 * (sandbox/docker/standby.ts says which), so that the next create() of that specification only has to
 * send the repository in. A standby has run nothing but its own start-up: taking one is the same as
 * starting a fresh sandbox, minus the wait. At most `max` are kept, the least recently used go first, and
 * one left unused for `idleMs` is removed.
 */

interface StandbyPoolOptions {
  /** How many standbys at most (0: none). */
  max: number;
  /** A standby not taken in this time is removed. */
  idleMs: number;
}

interface Entry<T> {
  ready: Promise<T>;
  usedAt: number;
  timer: NodeJS.Timeout;
}

export class StandbyPool<T extends { dispose(): Promise<void> }> {
  private readonly entries = new Map<string, Entry<T>>();
  private closed = false;

  constructor(private readonly options: StandbyPoolOptions) {}

  /** Whether refill() starts standbys. */
  get enabled(): boolean {
    return this.options.max > 0 && !this.closed;
  }

  /** How many standbys are kept or starting. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The standby of `fingerprint`, out of the pool: null when there is none or it failed to start. One
   * still starting is waited for: it began before this call, so it is ready no later than a fresh start.
   */
  async take(fingerprint: string): Promise<T | null> {
    const entry = this.entries.get(fingerprint);
    if (!entry) return null;
    this.entries.delete(fingerprint);
    clearTimeout(entry.timer);
    return entry.ready.catch(() => null);
  }

  /**
   * Starts a standby of `fingerprint` unless one is kept or starting; above `max`, the least recently used
   * other standby is removed. A start that fails leaves no entry (the next create() starts afresh).
   */
  refill(fingerprint: string, start: () => Promise<T>): void {
    if (!this.enabled) return;
    const existing = this.entries.get(fingerprint);
    if (existing) {
      existing.usedAt = Date.now();
      return;
    }
    const ready = start();
    const entry: Entry<T> = { ready, usedAt: Date.now(), timer: this.idleTimer(fingerprint) };
    this.entries.set(fingerprint, entry);
    ready.catch(() => {
      if (this.entries.get(fingerprint) === entry) this.drop(fingerprint);
    });
    while (this.entries.size > this.options.max) this.drop(this.leastRecentlyUsed());
  }

  /** Removes every standby of the pool's, and starts no more. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.entries.keys()];
    await Promise.all(all.map((fingerprint) => this.drop(fingerprint)));
  }

  private idleTimer(fingerprint: string): NodeJS.Timeout {
    const timer = setTimeout(() => void this.drop(fingerprint), this.options.idleMs);
    timer.unref();
    return timer;
  }

  private leastRecentlyUsed(): string {
    let oldest: [string, number] | undefined;
    for (const [fingerprint, entry] of this.entries) {
      if (!oldest || entry.usedAt < oldest[1]) oldest = [fingerprint, entry.usedAt];
    }
    return oldest?.[0] ?? "";
  }

  private async drop(fingerprint: string): Promise<void> {
    const entry = this.entries.get(fingerprint);
    if (!entry) return;
    this.entries.delete(fingerprint);
    clearTimeout(entry.timer);
    const standby = await entry.ready.catch(() => null);
    await standby?.dispose().catch(() => undefined); // gone with the engine: the reaper's
  }
}
