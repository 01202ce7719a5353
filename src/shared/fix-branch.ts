/**
 * The branch an issue's fix lives on, `agent-fix/issue-N`: the same one on every retrigger. The worker
 * pushes it; the webhook process recognises a review on it (the name alone proves nothing, see
 * github/own-pull.ts).
 */
const FIX_BRANCH_PREFIX = "agent-fix/issue-";

export function fixBranch(issueNumber: number): string {
  return `${FIX_BRANCH_PREFIX}${issueNumber}`;
}

/** The issue number N of a branch named `agent-fix/issue-N`; null for any other name. */
export function issueOfFixBranch(ref: string): number | null {
  if (!ref.startsWith(FIX_BRANCH_PREFIX)) return null;
  const issue = ref.slice(FIX_BRANCH_PREFIX.length);
  return /^\d+$/.test(issue) ? Number(issue) : null;
}
