/** A Map of at most `capacity` entries; when full, the least recently set goes first. */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();
  constructor(private readonly capacity: number) {}
  get(key: K) {
    return this.entries.get(key);
  }
  set(key: K, value: V) {
    this.entries.delete(key);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, value);
  }
  delete(key: K) {
    this.entries.delete(key);
  }
}
