/**
 * Trajectories where every process of the deployment reads what any worker wrote (not one worker's
 * disk). Each is brotli-compressed JSON, kept for the operator's retention period
 * (AGENT_FIX_TRAJECTORY_RETENTION_DAYS) and capped in size (AGENT_FIX_TRAJECTORY_MAX_BYTES): past the
 * cap the chat history (a repeat of the steps) is dropped, then long texts are cut in the middle. The
 * compressed body goes to the blobs: Redis (`PREFIX:trajectory:NAME`) or, when the operator configures
 * one, an S3-compatible bucket (trajectory-s3.ts). A run's summary (repository, issue, outcome, cost,
 * duration) is always kept in Redis for the dashboard's list, indexed by start time in `PREFIX:runs`.
 */
import { promisify } from "node:util";
import { brotliCompress, brotliDecompress, constants } from "node:zlib";
import type { Redis } from "ioredis";
import type { Trajectory } from "./contracts.js";
import { trajectoryBlobKey, trajectoryIndexKey, trajectoryRunKey } from "./queue/keys.js";

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);
const DAY_MS = 24 * 60 * 60 * 1000;
/** Quality 5: most of the gain of 11 at a small part of its time; a run saves after every step. */
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };
/** A run name as runName (worker/run/open/open-run.ts) or the CLI makes it. */
const RUN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

/** Who a run was for; the worker knows it from the job. */
export interface RunMeta {
  /** owner/repo when the run was made: shown, never what decides who may see it. */
  repo: string;
  /**
   * The repository's immutable id: a signed-in viewer sees the run only if GitHub lets them read the
   * repository of this id now (a name can pass to another repository). A run without it (stored before
   * ids were, or by the CLI) is for operators only.
   */
  repoId?: number;
  issue: number;
  trigger?: string;
}

/** One line of the dashboard's list. */
export interface RunSummary extends RunMeta {
  name: string;
  outcome: string;
  costUsd: number;
  steps: number;
  startedAt: string;
  finishedAt: string | null;
}

export interface SaveResult {
  /** Bytes stored (compressed) and of the JSON before compression. */
  storedBytes: number;
  jsonBytes: number;
  /** How the trajectory was shrunk to fit the cap. */
  cut: "none" | "history" | "texts";
}

export interface TrajectoryStore {
  save(name: string, meta: RunMeta, trajectory: Trajectory): Promise<SaveResult>;
  load(name: string): Promise<Trajectory | null>;
  /** A run's summary (its repository decides who may see it), or null. */
  summary(name: string): Promise<RunSummary | null>;
  /** The newest runs first; with `after`, those older than that run (the last of the previous page). */
  list(limit?: number, after?: string): Promise<RunSummary[]>;
}

/** Where compressed trajectories are kept, each for `ttlMs` after its last save. */
export interface TrajectoryBlobs {
  /** Where they are, for logs: "Redis" or the bucket. */
  readonly where: string;
  put(name: string, data: Buffer, ttlMs: number): Promise<void>;
  /** The body, or null when it is missing or older than `ttlMs`. */
  get(name: string, ttlMs: number): Promise<Buffer | null>;
  /** Removes runs the retention period is over for (Redis expires them by itself). */
  remove(names: string[]): Promise<void>;
}

interface StoreOptions {
  prefix: string;
  retentionDays: number;
  maxBytes: number;
  /** Default: Redis, beside the summaries. */
  blobs?: TrajectoryBlobs;
}

function redisBlobs(redis: Redis, prefix: string): TrajectoryBlobs {
  const key = (name: string) => trajectoryBlobKey(prefix, name);
  return {
    where: "Redis",
    put: async (name, data, ttlMs) => void (await redis.set(key(name), data, "PX", ttlMs)),
    get: (name) => redis.getBuffer(key(name)),
    remove: async () => {},
  };
}

export function createTrajectoryStore(redis: Redis, options: StoreOptions): TrajectoryStore {
  const key = (name: string) => trajectoryRunKey(options.prefix, name);
  const index = trajectoryIndexKey(options.prefix);
  const ttlMs = Math.round(options.retentionDays * DAY_MS);
  const blobs = options.blobs ?? redisBlobs(redis, options.prefix);
  return {
    async save(name, meta, trajectory) {
      if (!RUN_NAME.test(name)) throw new Error(`Not a run name: ${name}`);
      const packed = await pack(trajectory, options.maxBytes);
      const summary = summarise(name, meta, trajectory);
      const started = Date.parse(summary.startedAt) || Date.now();
      await blobs.put(name, packed.data, ttlMs);
      const cutoff = Date.now() - ttlMs;
      const done = await redis
        .multi()
        .set(key(name), JSON.stringify(summary), "PX", ttlMs)
        .zadd(index, started, name)
        // The index forgets what the retention period removed, and the blobs drop it too.
        .zrangebyscore(index, "-inf", cutoff)
        .zremrangebyscore(index, "-inf", cutoff)
        .exec();
      const expired = (done?.[2]?.[1] ?? []) as string[];
      const others = expired.filter((old) => old !== name);
      if (others.length > 0) await blobs.remove(others);
      return { storedBytes: packed.data.length, jsonBytes: packed.jsonBytes, cut: packed.cut };
    },
    async load(name) {
      if (!RUN_NAME.test(name)) return null;
      const data = await blobs.get(name, ttlMs);
      return data ? (JSON.parse((await decompress(data)).toString("utf8")) as Trajectory) : null;
    },
    async summary(name) {
      if (!RUN_NAME.test(name)) return null;
      const row = await redis.get(key(name));
      return row ? (JSON.parse(row) as RunSummary) : null;
    },
    async list(limit = 200, after) {
      // From the previous page's last run as it ranks now (newer runs may have come in above it).
      const rank = after === undefined ? -1 : await redis.zrevrank(index, after);
      if (rank === null) return [];
      const names = await redis.zrevrange(index, rank + 1, rank + limit);
      if (names.length === 0) return [];
      const rows = await redis.mget(names.map(key));
      return rows.flatMap((row) => (row ? [JSON.parse(row) as RunSummary] : []));
    },
  };
}

function summarise(name: string, meta: RunMeta, trajectory: Trajectory): RunSummary {
  const { info } = trajectory;
  return {
    ...meta,
    name,
    outcome: info.exit_status ?? "running",
    costUsd: info.model_stats.instance_cost,
    steps: trajectory.trajectory.length,
    startedAt: info.started_at,
    finishedAt: info.finished_at,
  };
}

/** Longest text kept of a thought, action or observation once the history alone did not make it fit. */
const CUT_TEXT_CHARS = 4_000;

async function pack(trajectory: Trajectory, maxBytes: number) {
  const attempt = async (value: Trajectory, cut: SaveResult["cut"]) => {
    const json = Buffer.from(JSON.stringify(value));
    return { data: await compress(json, BROTLI), jsonBytes: json.length, cut };
  };
  const whole = await attempt(trajectory, "none");
  if (whole.data.length <= maxBytes) return whole;
  const withoutHistory = { ...trajectory, history: [] };
  const lighter = await attempt(withoutHistory, "history");
  if (lighter.data.length <= maxBytes) return lighter;
  const steps = trajectory.trajectory.map((step) => ({
    ...step,
    thought: cutMiddle(step.thought),
    action: cutMiddle(step.action),
    observation: cutMiddle(step.observation),
    response: cutMiddle(step.response),
  }));
  const gate = trajectory.info.gate.map((record) => ({ ...record, output: cutMiddle(record.output) }));
  const info = { ...trajectory.info, gate, stored_cut: `texts over ${CUT_TEXT_CHARS} characters` };
  const cut = await attempt({ ...withoutHistory, trajectory: steps, info }, "texts");
  if (cut.data.length <= maxBytes) return cut;
  throw new Error(
    `trajectory of ${cut.jsonBytes} bytes is over AGENT_FIX_TRAJECTORY_MAX_BYTES even cut (${cut.data.length} compressed)`,
  );
}

function cutMiddle(text: string): string {
  if (text.length <= CUT_TEXT_CHARS) return text;
  const half = CUT_TEXT_CHARS / 2;
  return `${text.slice(0, half)}\n[… ${text.length - CUT_TEXT_CHARS} characters cut to fit the store …]\n${text.slice(-half)}`;
}
