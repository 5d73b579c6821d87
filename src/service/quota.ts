/**
 * Quota per organisation: each POST costs one unit per theta row (an experiment of M rows costs
 * M), reads cost nothing. `reserve` checks and takes the units in one synchronous step, so
 * concurrent POSTs (each handled to completion of this step before the next runs on the event
 * loop) can never spend more than the plan has. A POST refused after its reservation gives the
 * units back with `refund`; validation runs before reserving, so an invalid POST costs nothing.
 *
 * The used counts are what persists (state.json in the data dir); the plan sizes come from the
 * credentials at each start.
 */
export interface QuotaStatus {
  quota: number;
  used: number;
  remaining: number;
}

export type Reservation = { ok: true; status: QuotaStatus } | { ok: false; status: QuotaStatus };

export class QuotaLedger {
  private readonly used: Map<string, number>;

  /**
   * @param plans units per organisation name
   * @param used units already spent (from the data dir)
   * @param onChange called after every change (persistence)
   */
  constructor(
    private readonly plans: ReadonlyMap<string, number>,
    used: Readonly<Record<string, number>> = {},
    private readonly onChange: () => void = () => {},
  ) {
    this.used = new Map(Object.entries(used));
  }

  status(org: string): QuotaStatus {
    const quota = this.plans.get(org) ?? 0;
    const used = this.used.get(org) ?? 0;
    return { quota, used, remaining: Math.max(0, quota - used) };
  }

  /** Takes `units` if that many remain; otherwise takes nothing. */
  reserve(org: string, units: number): Reservation {
    if (!Number.isInteger(units) || units < 1) throw new RangeError(`units must be a positive integer, got ${units}`);
    const status = this.status(org);
    if (status.remaining < units) return { ok: false, status };
    this.used.set(org, status.used + units);
    this.onChange();
    return { ok: true, status: this.status(org) };
  }

  /** Gives back units of a reservation whose POST was refused after all. */
  refund(org: string, units: number): void {
    this.used.set(org, Math.max(0, (this.used.get(org) ?? 0) - units));
    this.onChange();
  }

  /** Units used per organisation, for persistence. */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.used);
  }
}
