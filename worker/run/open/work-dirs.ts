/**
 * Host checkouts (`agent-fix-*` under the work root) that outlive their worker. A run removes its own
 * directory when it ends, but a worker killed mid-run (SIGKILL, out of memory, a host reboot with a
 * persistent work dir) cannot: each directory therefore records its owner in a marker file, and the
 * worker's reaper removes those whose owner is gone, as it does for sandboxes (sandbox/docker/reaper.ts).
 * Directories without a marker (being created, or made by something else) are never touched.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { defaultWorkerId } from "../../../sandbox/docker/provider.js";
import { DEFAULT_REAP_MAX_AGE_MS, workerAliveOnThisHost } from "../../../sandbox/docker/reaper.js";

const CHECKOUT_PREFIX = "agent-fix-";
const OWNER_FILE = ".agent-fix-owner";

const ownerSchema = z.object({
  /** `host:pid` of the worker process that made the directory. */
  worker: z.string().min(1),
  created: z.number(),
});
type CheckoutOwner = z.infer<typeof ownerSchema>;

/** A fresh checkout root under `workRoot` (default: the temp dir), marked as this process's. */
export async function makeCheckoutRoot(workRoot: string = tmpdir()): Promise<string> {
  const root = await mkdtemp(join(workRoot, CHECKOUT_PREFIX));
  const owner: CheckoutOwner = { worker: defaultWorkerId(), created: Date.now() };
  await writeFile(join(root, OWNER_FILE), `${JSON.stringify(owner)}\n`);
  return root;
}

interface ReapCheckoutsOptions {
  /** Where checkouts are made (AGENT_FIX_WORK_DIR); default the temp dir. */
  workRoot?: string;
  /** Whether the worker `host:pid` still runs. Default: same host and its pid is alive. */
  isWorkerAlive?: (workerId: string) => boolean;
  /** Marked checkouts older than this are removed whoever owns them (another host's). Default 6 hours. */
  maxAgeMs?: number;
  now?: number;
  log?: (message: string) => void;
}

/** Removes marked checkouts whose worker is gone; returns the directories removed. */
export async function reapCheckouts(options: ReapCheckoutsOptions = {}): Promise<string[]> {
  const workRoot = options.workRoot ?? tmpdir();
  const alive = options.isWorkerAlive ?? workerAliveOnThisHost;
  const maxAge = options.maxAgeMs ?? DEFAULT_REAP_MAX_AGE_MS;
  const now = options.now ?? Date.now();
  const removed: string[] = [];
  const entries = await readdir(workRoot, { withFileTypes: true }).catch(() => []); // no root: nothing to reap
  for (const entry of entries) {
    if (!entry.isDirectory() || !entry.name.startsWith(CHECKOUT_PREFIX)) continue;
    const dir = join(workRoot, entry.name);
    const owner = await readOwner(dir);
    if (!owner) continue;
    const reason = !alive(owner.worker)
      ? `worker ${owner.worker} is gone`
      : now - owner.created > maxAge
        ? `older than ${Math.round(maxAge / 60_000)} min`
        : null;
    if (!reason) continue;
    try {
      await rm(dir, { recursive: true, force: true });
      removed.push(dir);
      options.log?.(`removed checkout ${dir} (${reason})`);
    } catch (error) {
      options.log?.(`cannot remove checkout ${dir}: ${(error as Error).message}`);
    }
  }
  return removed;
}

async function readOwner(dir: string): Promise<CheckoutOwner | null> {
  try {
    const parsed = ownerSchema.safeParse(JSON.parse(await readFile(join(dir, OWNER_FILE), "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null; // no readable owner file: not a checkout the reaper may judge, so it is left alone
  }
}
