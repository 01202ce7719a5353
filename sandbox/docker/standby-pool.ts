/**
 * Standby sandboxes: a few sandboxes started ahead of need, each for one exact sandbox specification
 * (sandbox/docker/standby.ts says which), so that the next create() of that specification only has to
 * send the repository in. A standby has run nothing but its own start-up: taking one is the same as
 * starting a fresh sandbox, minus the wait. Up to `perKind` are kept of one specification (a run asks
 * for several at once), at most `max` in all: a kind refilled takes room from the least recently used
 * kind holding more than itself, so kinds in use share the pool and the latest has the most. One left
 * unused for `idleMs` is removed.
 */

interface StandbyPoolOptions {
  /** How many standbys at most, of every kind together (0: none). */
  max: number;
  /** A standby not taken in this time is removed. */
  idleMs: number;
  /** How many of one kind at most (default 1; never above `max`). */
  perKind?: number;
}

interface Standby<T> {
  ready: Promise<T>;
  timer: NodeJS.Timeout;
}

/** The standbys of one fingerprint, oldest first, and when that kind was last asked for. */
interface Kind<T> {
  standbys: Standby<T>[];
  usedAt: number;
}

export class StandbyPool<T extends { dispose(): Promise<void> }> {
  private readonly kinds = new Map<string, Kind<T>>();
  private closed = false;

  constructor(private readonly options: StandbyPoolOptions) {}

  /** Whether refill() starts standbys. */
  get enabled(): boolean {
    return this.options.max > 0 && !this.closed;
  }

  /** How many standbys are kept or starting, of every kind. */
  get size(): number {
    let size = 0;
    for (const kind of this.kinds.values()) size += kind.standbys.length;
    return size;
  }

  private get perKind(): number {
    return Math.min(this.options.max, this.options.perKind ?? 1);
  }

  /**
   * A standby of `fingerprint`, out of the pool (the oldest: the likeliest to be ready); null when there
   * is none or it failed to start. One still starting is waited for: it began before this call, so it is
   * ready no later than a fresh start.
   */
  async take(fingerprint: string): Promise<T | null> {
    const kind = this.kinds.get(fingerprint);
    const standby = kind?.standbys.shift();
    if (!kind || !standby) return null;
    if (kind.standbys.length === 0) this.kinds.delete(fingerprint);
    clearTimeout(standby.timer);
    return standby.ready.catch(() => null);
  }

  /**
   * Starts standbys of `fingerprint` until `perKind` are kept or starting; with `max` reached, each
   * takes the place of the newest standby of the least recently used kind holding more than this one
   * (none: no more start). A start that fails leaves no entry (the next create() starts afresh).
   */
  refill(fingerprint: string, start: () => Promise<T>): void {
    if (!this.enabled) return;
    const kind = this.kinds.get(fingerprint) ?? { standbys: [], usedAt: 0 };
    this.kinds.set(fingerprint, kind);
    kind.usedAt = Date.now();
    while (kind.standbys.length < this.perKind) {
      if (this.size >= this.options.max) {
        const room = this.leastRecentlyUsed(fingerprint, kind.standbys.length);
        if (!room) break;
        this.dropNewest(room);
      }
      const standby = { ready: start() } as Standby<T>;
      standby.timer = this.idleTimer(fingerprint, standby);
      kind.standbys.push(standby);
      standby.ready.catch(() => void this.drop(fingerprint, standby));
    }
    if (kind.standbys.length === 0) this.kinds.delete(fingerprint);
  }

  /** Removes every standby of the pool's, and starts no more. */
  async close(): Promise<void> {
    this.closed = true;
    // Copied first: each drop takes its standby out of its kind's list.
    const all = [...this.kinds].flatMap(([fingerprint, kind]) =>
      [...kind.standbys].map((standby) => this.drop(fingerprint, standby)),
    );
    await Promise.all(all);
  }

  private idleTimer(fingerprint: string, standby: Standby<T>): NodeJS.Timeout {
    const timer = setTimeout(() => void this.drop(fingerprint, standby), this.options.idleMs);
    timer.unref();
    return timer;
  }

  /** The kind other than `refilled` asked for least recently among those holding more than `holding`. */
  private leastRecentlyUsed(refilled: string, holding: number): string | null {
    let oldest: [string, number] | undefined;
    for (const [fingerprint, kind] of this.kinds) {
      if (fingerprint === refilled || kind.standbys.length <= holding) continue;
      if (!oldest || kind.usedAt < oldest[1]) oldest = [fingerprint, kind.usedAt];
    }
    return oldest?.[0] ?? null;
  }

  /** Removes the newest standby of a kind: the one likeliest still starting, whose start costs least to lose. */
  private dropNewest(fingerprint: string): void {
    const standby = this.kinds.get(fingerprint)?.standbys.at(-1);
    if (standby) void this.drop(fingerprint, standby);
  }

  private async drop(fingerprint: string, standby: Standby<T>): Promise<void> {
    const kind = this.kinds.get(fingerprint);
    const at = kind?.standbys.indexOf(standby) ?? -1;
    if (!kind || at < 0) return;
    kind.standbys.splice(at, 1);
    if (kind.standbys.length === 0) this.kinds.delete(fingerprint);
    clearTimeout(standby.timer);
    const started = await standby.ready.catch(() => null);
    await started?.dispose().catch(() => undefined); // gone with the engine: the reaper's
  }
}
