/**
 * The sessions bench:tokens replays: recorded replies of a model, the repository they were given, the
 * issue and the test command of the gate. The real bugs are recorded under test/fixtures/real-bugs/
 * (a model in the agent's seat, issue 27), their projects fetched from the registries at run time;
 * the sample session is the repository's own fixture, for a run without the network.
 */
import { cpSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SAMPLE_ISSUE, SAMPLE_REPLAY, SAMPLE_REPO_DIR } from "../test/support/stack-parts.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export interface TokenSession {
  name: string;
  /** The recorded replies: a replay file (worker/model/replay.ts). */
  replay: string;
  issue: { title: string; body: string };
  /** The gate's command, as the recording was gated. */
  testCommand: string;
  /** The sandbox image the recording ran in; default: the one `agent-fix run` chooses. */
  image?: string;
  /** Lays the repository's files into `dir` (a git repository is made of them afterwards). */
  checkout(dir: string): Promise<void>;
  /** The patch the recorded session submitted, when it was kept: a replay must submit it again. */
  patch?: string;
}

const sample: TokenSession = {
  name: "sample-median",
  replay: SAMPLE_REPLAY,
  issue: SAMPLE_ISSUE,
  testCommand: "python3 -m unittest discover -s tests",
  checkout: async (dir) => cpSync(SAMPLE_REPO_DIR, dir, { recursive: true }),
};

export async function tokenSessions(): Promise<TokenSession[]> {
  return [sample];
}

export { repoRoot };
