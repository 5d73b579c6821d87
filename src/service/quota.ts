/**
 * Units used per organisation, in memory (the embedded store's ledger; store/contract.ts says who keeps
 * it durable). Each POST costs one unit per theta row (an experiment of M rows costs M), reads
 * cost nothing. `reserve` checks and takes the units in one synchronous step, so concurrent POSTs
 * (each handled to completion of this step before the next runs on the event loop) can never
 * spend more than the plan has. A POST refused after its reservation gives the units back with
 * `refund`; validation runs before reserving, so an invalid POST costs nothing.
 *
 * The plan sizes come from the credentials at each call; the used counts are derived from the
 * stored requests at start-up (store/embedded.ts), so they never drift from the jobs.
 */
export interface QuotaStatus {
  quota: number;
  used: number;
  remaining: number;
}

export type Reservation = { ok: true; status: QuotaStatus } | { ok: false; status: QuotaStatus };

export class QuotaLedger {
  private readonly used = new Map<string, number>();

  /**
   * @example
   * const ledger = new QuotaLedger();
   * ledger.reserve("acme", 10, 3); // { ok: true, status: { quota: 10, used: 3, remaining: 7 } }
   */
  status(org: string, plan: number): QuotaStatus {
    const used = this.used.get(org) ?? 0;
    return { quota: plan, used, remaining: Math.max(0, plan - used) };
  }

  /** Takes `units` if that many remain of `plan`; otherwise takes nothing. */
  reserve(org: string, plan: number, units: number): Reservation {
    if (!Number.isInteger(units) || units < 1) throw new RangeError(`units must be a positive integer, got ${units}`);
    const status = this.status(org, plan);
    if (status.remaining < units) return { ok: false, status };
    this.used.set(org, status.used + units);
    return { ok: true, status: this.status(org, plan) };
  }

  /** Counts units already spent (stored requests, at start-up). */
  add(org: string, units: number): void {
    this.used.set(org, (this.used.get(org) ?? 0) + units);
  }

  /** Gives back units of a reservation whose request was refused after all. */
  refund(org: string, units: number): void {
    this.used.set(org, Math.max(0, (this.used.get(org) ?? 0) - units));
  }
}
