/**
 * Whether a job may start now (docs/architecture.md, "Fairness and quotas"): its installation's
 * runs at once (over: it waits, parked), its installation's monthly budget and its repository's runs
 * per day (over: refused, with a status comment naming the limit and when it resets). A run is judged
 * once, when it first starts: its retries, hand-backs and restarts only take a slot again.
 */
import type { Redis } from "ioredis";
import {
  acquireSlot,
  freeSlots,
  releaseSlot,
  renewSlot,
  type SlotRequest,
} from "../../src/shared/queue/fair-slots.js";
import type { FixJobData, QueueNames } from "../../src/shared/queue/index.js";
import { fairNotedKey } from "../../src/shared/queue/keys.js";
import { nextDay, nextMonth, type RunUsage } from "../../src/shared/queue/usage.js";
import type { QuotasConfig } from "../config/quotas.js";
import type { Logger } from "../log.js";
import { type AppliedLimits, type HeldBy, heldByText, limitsFor } from "./admission-limits.js";

export type Notice = { kind: "waiting" | "refused"; text: string };

interface FairnessDeps {
  redis: Redis;
  names: QueueNames;
  quotas: QuotasConfig;
  usage: RunUsage;
  /** Writes the job's status comment: a waiting note (progress) or a refusal (final). */
  notify(job: FixJobData, notice: Notice): Promise<void>;
  /** Moves a parked (delayed) job to the back of the waiting list; false when it is not parked any more. */
  promote(jobId: string): Promise<boolean>;
  logger: Logger;
}

type Admission =
  | { kind: "admitted"; release(): Promise<void> }
  /**
   * Parked: wait until woken by a release, or `until` (ms) at the latest. Once the job is delayed,
   * `recheck` wakes it at once if a slot came free meanwhile (a release that found it not yet delayed).
   */
  | { kind: "wait"; until: number; recheck(): Promise<void> }
  /** `statusWritten`: the refusal is on the issue already. */
  | { kind: "refused"; reason: string; statusWritten: boolean };

/** The parts of a BullMQ job admission reads. */
interface AdmittedJob {
  id?: string | undefined;
  timestamp: number;
  data: FixJobData;
}

export function runAdmission(deps: FairnessDeps) {
  const leaseMs = deps.quotas.leaseSeconds * 1000;
  return {
    async admit(job: AdmittedJob): Promise<Admission> {
      const data = job.data;
      const jobId = job.id ?? "";
      // One enqueue is one run, whatever happens to it after it first started.
      const run = `${jobId}@${job.timestamp}`;
      // Read at once (one round trip, not three): this is on the path of every run's start.
      const [limits, resumed, spent] = await Promise.all([
        limitsFor(deps.redis, deps.names, deps.quotas, data.accountId),
        deps.usage.counted(data.repoId, run),
        deps.usage.spentThisMonth(data.installationId),
      ]);
      const overBudget = resumed ? null : budgetHeld(spent, limits);
      if (overBudget) return refuse(deps, data, limits, overBudget);
      const slot: SlotRequest = {
        installationId: data.installationId,
        jobId,
        limit: limits.runsAtOnce,
        leaseMs,
      };
      if (!(await acquireSlot(deps.redis, deps.names, slot))) {
        await noteWaitingOnce(deps, data, limits, run);
        const recheck = async () => {
          if ((await freeSlots(deps.redis, deps.names, slot)) > 0) await deps.promote(jobId);
        };
        return { kind: "wait", until: Date.now() + deps.quotas.recheckSeconds * 1000, recheck };
      }
      if (
        !resumed &&
        (await deps.usage.countRun(data.repoId, run, limits.runsPerDayPerRepository)) === "over-limit"
      ) {
        await freeSlot(deps, slot);
        const resetsAt = nextDay(new Date());
        return refuse(deps, data, limits, {
          limit: "runsPerDayPerRepository",
          value: limits.runsPerDayPerRepository ?? 0,
          resetsAt,
        });
      }
      deps.logger.info({ jobId, installationId: data.installationId }, "run admitted");
      return { kind: "admitted", release: holdSlot(deps, slot) };
    },
  };
}
export type RunAdmission = ReturnType<typeof runAdmission>;

/** The monthly budget, when the installation's spend this month has reached it. */
function budgetHeld(spent: number, limits: AppliedLimits): HeldBy | null {
  if (limits.monthlyBudgetUsd === null || spent < limits.monthlyBudgetUsd) return null;
  return {
    limit: "monthlyBudgetUsd",
    value: limits.monthlyBudgetUsd,
    spent,
    resetsAt: nextMonth(new Date()),
  };
}

async function refuse(
  deps: FairnessDeps,
  data: FixJobData,
  limits: AppliedLimits,
  held: HeldBy,
): Promise<Admission> {
  const reason = heldByText(held, limits.plan, `${data.owner}/${data.repo}`);
  deps.logger.info({ installationId: data.installationId, limit: held.limit }, "run refused by a limit");
  const statusWritten = await deps.notify(data, { kind: "refused", text: reason }).then(
    () => true,
    (err: unknown) => {
      deps.logger.warn({ err }, "could not write the refusal to the status comment");
      return false;
    },
  );
  return { kind: "refused", reason, statusWritten };
}

/** The waiting note, once per run (it may be parked and woken many times). */
async function noteWaitingOnce(deps: FairnessDeps, data: FixJobData, limits: AppliedLimits, run: string) {
  const key = fairNotedKey(deps.names, run);
  if ((await deps.redis.set(key, "1", "EX", 24 * 60 * 60, "NX")) !== "OK") return;
  const text = heldByText({ limit: "runsAtOnce", value: limits.runsAtOnce }, limits.plan, "");
  await deps.notify(data, { kind: "waiting", text }).catch((err: unknown) => {
    deps.logger.warn({ err }, "could not write the waiting note to the status comment");
  });
}

/** Renews the lease while the run holds it; the returned function gives it back (once). */
function holdSlot(deps: FairnessDeps, slot: SlotRequest): () => Promise<void> {
  const renew = setInterval(
    () => {
      renewSlot(deps.redis, deps.names, slot).catch((err: unknown) =>
        deps.logger.warn({ err, jobId: slot.jobId }, "could not renew the run's slot"),
      );
    },
    Math.max(1_000, Math.floor(slot.leaseMs / 3)),
  );
  renew.unref();
  let released: Promise<void> | undefined;
  return () => {
    clearInterval(renew);
    // The moment the slot is given back, taken before asking Redis: the log line comes after freeSlot has
    // also woken parked runs, which another worker may admit (and log) first.
    const releasedAt = Date.now();
    released ??= freeSlot(deps, slot).then(() =>
      deps.logger.info(
        { jobId: slot.jobId, installationId: slot.installationId, releasedAt },
        "run slot released",
      ),
    );
    return released;
  };
}

/** Gives the slot back and wakes the installation's oldest parked runs, one per free slot. */
async function freeSlot(deps: FairnessDeps, slot: SlotRequest): Promise<void> {
  let ids = await releaseSlot(deps.redis, deps.names, slot);
  // A parked id whose job is gone (cancelled) or already awake gives its turn to the next one.
  for (let rounds = 0; ids.length > 0 && rounds < 20; rounds++) {
    const promoted = await Promise.all(ids.map((id) => deps.promote(id)));
    if (promoted.every(Boolean)) return;
    ids = await releaseSlot(deps.redis, deps.names, { ...slot, jobId: "" });
  }
}
