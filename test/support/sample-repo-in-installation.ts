/**
 * The sample repository, as Stack.addSampleRepo adds it, in an installation of the caller's choosing.
 * For stacks that run side by side in one process: @octokit/auth-app shares a token request in flight
 * between every app of a process by installation alone (its module-level `pendingPromises`), so two
 * stacks' apps asking their own stand-ins for installation 1's token at the same moment would hand one
 * of them the other's token, which its stand-in refuses (401). A repository in an installation of its
 * own stack's keeps the requests apart.
 */
import type { SampleRepo, Stack } from "./stack.js";
import { filesOf, SAMPLE_REPO_DIR } from "./stack-parts.js";

export async function sampleRepoInInstallation(
  stack: Stack,
  name: string,
  installationId: number,
  extraFiles: Record<string, string> = {},
): Promise<SampleRepo> {
  const repo = await stack.github.addRepo({
    owner: "octo",
    name,
    installationId,
    files: { ...(await filesOf(SAMPLE_REPO_DIR)), ...extraFiles },
    permissions: { maintainer: "write", outsider: "read" },
  });
  return { owner: repo.owner, name: repo.name, id: repo.id, installationId: repo.installationId };
}
