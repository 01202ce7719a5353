/**
 * A repository with no config of its own under an owner whose `.github` repository names a replayed
 * model: how the no-config e2e tests seed a real project and the agent's scripted turns.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Stack } from "./stack.js";
import type { IssueRef } from "./stack-parts.js";

interface ReplayedProject {
  owner: string;
  name: string;
  installationId: number;
  files: Record<string, string | Uint8Array>;
  /** The model's replies, one JSON line each; written to `<dir>/<owner>.jsonl`. */
  turns: string[];
  maxSteps?: number;
  issue: { title: string; body: string };
}

export async function addReplayedProject(
  stack: Stack,
  dir: string,
  project: ReplayedProject,
): Promise<IssueRef> {
  const { owner, name, installationId, files } = project;
  const replay = join(dir, `${owner}.jsonl`);
  await writeFile(replay, `${project.turns.join("\n")}\n`);
  const permissions = { maintainer: "write" };
  await stack.github.addRepo({
    owner,
    name: ".github",
    files: {
      ".github/agent-fix.yml": `model: replay:${replay}\nlimits:\n  maxSteps: ${project.maxSteps ?? 10}\n`,
    },
    permissions,
    installationId,
  });
  const repo = await stack.github.addRepo({ owner, name, files, permissions, installationId });
  return stack.addIssue({ owner, name, id: repo.id, installationId: repo.installationId }, project.issue);
}
