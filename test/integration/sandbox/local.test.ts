import { existsSync, readdirSync, readFileSync } from "node:fs";
import { type LocalSandbox, LocalSandboxProvider } from "../../../sandbox/local.js";
import { CONTRACT_MAX_OUTPUT_CHARS, sandboxContract } from "../../support/sandbox-contract.js";

/** Processes still alive in the shell's session (the local driver starts each shell as a session leader). */
function sessionMembers(sid: number): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
      if (Number(fields[3]) === sid && fields[0] !== "Z") found.push(`process ${entry}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

sandboxContract({
  name: "local",
  provider: () =>
    new LocalSandboxProvider({ maxOutputChars: CONTRACT_MAX_OUTPUT_CHARS, warn: () => undefined }),
  leftovers: async (sandbox, shellPid) => {
    const left = sessionMembers(shellPid);
    const root = (sandbox as LocalSandbox).root;
    if (existsSync(root)) left.push(`directory ${root}`);
    return left;
  },
});
