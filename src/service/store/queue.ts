/**
 * The fair queue of the embedded store (embedded.ts): queued job ids, one FIFO per organisation,
 * taken round robin. The PostgreSQL store keeps the same order in SQL (pg/queue.ts `claim`: the
 * oldest job of the organisation served longest ago), since its queue is shared by processes.
 */

/**
 * Queued job ids: one FIFO per organisation, taken round robin over the organisations that have
 * queued jobs. A flood from one organisation does not delay another's next job by more than one
 * job per worker.
 */
export class FairQueue {
  private readonly perOrg = new Map<string, { ids: number[]; head: number }>();
  private readonly ring: string[] = [];
  private next = 0;
  size = 0;

  push(org: string, id: number): void {
    let queue = this.perOrg.get(org);
    if (!queue) {
      queue = { ids: [], head: 0 };
      this.perOrg.set(org, queue);
      this.ring.push(org);
    }
    queue.ids.push(id);
    this.size++;
  }

  /** The organisation's next queued id, without taking it. */
  peek(org: string): number | undefined {
    const queue = this.perOrg.get(org);
    return queue && queue.head < queue.ids.length ? queue.ids[queue.head] : undefined;
  }

  /** Takes the organisation's next id out of its turn (after `peek`). */
  dropNext(org: string): void {
    const queue = this.perOrg.get(org);
    if (!queue || queue.head >= queue.ids.length) return;
    queue.head++;
    this.size--;
  }

  /**
   * Takes this id out of the organisation's queue, wherever it is (a job claimed by id: an inline
   * one, `EmbeddedStore.claimJob`). Searched from the newest end: such a job was just pushed.
   */
  remove(org: string, id: number): boolean {
    const queue = this.perOrg.get(org);
    if (!queue) return false;
    const at = queue.ids.lastIndexOf(id);
    if (at < queue.head) return false;
    queue.ids.splice(at, 1);
    this.size--;
    return true;
  }

  shift(): number | undefined {
    while (this.ring.length > 0) {
      if (this.next >= this.ring.length) this.next = 0;
      const org = this.ring[this.next];
      const queue = this.perOrg.get(org)!;
      if (queue.head >= queue.ids.length) {
        this.perOrg.delete(org);
        this.ring.splice(this.next, 1);
        continue;
      }
      const id = queue.ids[queue.head++];
      if (queue.head > 1024 && queue.head * 2 > queue.ids.length) {
        queue.ids = queue.ids.slice(queue.head);
        queue.head = 0;
      }
      this.next++;
      this.size--;
      return id;
    }
    return undefined;
  }
}
