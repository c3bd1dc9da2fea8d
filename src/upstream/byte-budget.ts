/**
 * Upstream answer bytes in flight, over all keys and per key, so no tenant's huge pages grow memory
 * without bound or starve the others. Refused at once, never queued: waiting would hold the
 * socket and the bytes already read.
 */

export interface ByteBudgetOptions {
  totalBytes: number;
  perKeyBytes: number;
}

/** Per key, one answer at the largest size the transports read (MAX_RESPONSE_BYTES); in total, two such. */
export const DEFAULT_BYTE_BUDGET: ByteBudgetOptions = { totalBytes: 256 * 1024 * 1024, perKeyBytes: 128 * 1024 * 1024 };

/** One key's share; dropped from the map when it holds nothing, so the map is as large as the keys reading now. */
interface KeyShare {
  bytes: number;
  leases: number;
}

/** The bytes one attempt holds. `grow` before keeping bytes; `release` once, when they are no longer needed. */
export interface ByteLease {
  /** Makes the lease hold at least `bytes` in total; false (and nothing taken) when a ceiling would be passed. */
  grow(bytes: number): boolean;
  release(): void;
}

export class ByteBudget {
    inFlight = 0;
  private readonly keys = new Map<string, KeyShare>();

  constructor(readonly options: ByteBudgetOptions = DEFAULT_BYTE_BUDGET) {}

  heldBy(keyId: string): number {
    return this.keys.get(keyId)?.bytes ?? 0;
  }

  lease(keyId: string): ByteLease {
    let share = this.keys.get(keyId);
    if (!share) this.keys.set(keyId, (share = { bytes: 0, leases: 0 }));
    share.leases++;
    const mine = share;
    let held = 0;
    let open = true;
    return {
      grow: (bytes) => {
        if (bytes <= held) return true;
        const more = bytes - held;
        if (!open || this.inFlight + more > this.options.totalBytes || mine.bytes + more > this.options.perKeyBytes) return false;
        held = bytes;
        mine.bytes += more;
        this.inFlight += more;
        return true;
      },
      release: () => {
        if (!open) return;
        open = false;
        mine.bytes -= held;
        this.inFlight -= held;
        held = 0;
        if (--mine.leases === 0) this.keys.delete(keyId);
      },
    };
  }
}
