/**
 * The sessions bench:tokens replays: recorded replies of a model, the repository they were given, the
 * issue and the gate's test command. The real bugs are those of test/fixtures/real-bugs/ (a model in
 * the agent's seat, issue 27), read and laid out again by test/support/real-bugs.ts as the e2e test of
 * them does; the sample session is the repository's own fixture.
 */
import { cpSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { commitAll } from "../test/support/committed-repo.js";
import { checkoutRealBug, type RealBug, realBugs } from "../test/support/real-bugs.js";
import { SAMPLE_ISSUE, SAMPLE_REPLAY, SAMPLE_REPO_DIR } from "../test/support/stack-parts.js";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export interface TokenSession {
  name: string;
  /** The recorded replies: a replay file (worker/model/replay.ts). */
  replay: string;
  issue: { title: string; body: string };
  /** The gate's command, as the recording was gated. */
  testCommand: string;
  /** The sandbox image the recording ran in; default: the one `agent-fix run` chooses. */
  image?: string | undefined;
  /** The repository, committed once under `root`; its directory. */
  checkout(root: string): Promise<string>;
  /** The patch the recorded session submitted, when it was kept: a replay must submit it again. */
  patch?: string | undefined;
}

const sample: TokenSession = {
  name: "sample-median",
  replay: SAMPLE_REPLAY,
  issue: SAMPLE_ISSUE,
  testCommand: "python3 -m unittest discover -s tests",
  checkout: async (root) => {
    const dir = path.join(root, "repo");
    cpSync(SAMPLE_REPO_DIR, dir, { recursive: true });
    commitAll(dir);
    return dir;
  },
};

/** The image a recording ran in (project.json's `recordedImage`), which test/support/real-bugs.ts leaves out. */
const recordedImageSchema = z.object({ recordedImage: z.string().min(1).optional() });

function session(bug: RealBug): TokenSession {
  const project = path.join(path.dirname(bug.replay), "project.json");
  const { recordedImage } = recordedImageSchema.parse(JSON.parse(readFileSync(project, "utf8")));
  return {
    name: bug.name,
    replay: bug.replay,
    issue: bug.issue,
    testCommand: bug.testCommand,
    image: recordedImage,
    patch: bug.patch,
    checkout: async (root) => {
      const dir = path.join(root, "repo");
      await checkoutRealBug(bug, dir, { testDeps: true });
      return dir;
    },
  };
}

/**
 * The real bugs recorded under test/fixtures/real-bugs/, then the sample; `main` are those a run
 * measures by default: the real bugs, or the sample while none is recorded.
 */
export async function tokenSessions(): Promise<{ all: TokenSession[]; main: TokenSession[] }> {
  const real = (await realBugs()).map(session);
  return { all: [...real, sample], main: real.length > 0 ? real : [sample] };
}
