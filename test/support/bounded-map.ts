/**
 * A Map that keeps at most `max` entries: a new key past that drops the oldest one. The stand-ins keep
 * git's answers about objects that never change in these, so that a vitest worker running many files
 * holds few of them.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.max) {
      const [oldest] = this.keys();
      if (oldest !== undefined) this.delete(oldest);
    }
    return super.set(key, value);
  }
}
