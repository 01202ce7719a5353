/**
 * What an observation is, for the history processor: a view of a file (the viewer's `[File: PATH`
 * frame), an edit of a file, or the output of a test run (a bash command that runs tests). Read from
 * the texts the ACI writes and from the action before it, so both action formats are covered.
 */
import type { ChatMessage } from "../../src/shared/contracts.js";

const footer = /\n\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\)$/;

/** The observation without the two state lines every ACI observation ends with. */
export function withoutFooter(content: string): string {
  return content.replace(footer, "");
}

/** The file an observation shows (viewer frame in its first lines, or an editor-bundle edit), if any. */
export function viewedFile(body: string): string | null {
  const head = body.split("\n", 4).join("\n");
  const frame = /^\[File: (.+?) \(\d+ lines total\)\]$/m.exec(head);
  if (frame) return frame[1]!;
  const editor =
    /^The file (\S+) has been edited\./.exec(body) ?? /^File created successfully at: (\S+)/.exec(body);
  return editor ? editor[1]! : null;
}

/** The file an observation says was changed, if it is the answer to an accepted edit. */
export function editedFile(body: string): string | null {
  if (/^File updated\b/m.test(body)) return viewedFile(body);
  if (/^The file \S+ has been edited\.|^File created successfully at: /.test(body)) return viewedFile(body);
  return null;
}

/** The shell command of an action: a bash call's `command`, or text mode's fenced block. */
export function shellCommand(action: ChatMessage | undefined): string | null {
  if (action?.role !== "assistant") return null;
  const call = action.tool_calls?.[0];
  if (call) {
    if (call.function.name !== "bash") return null;
    try {
      const args = JSON.parse(call.function.arguments) as { command?: unknown };
      return typeof args.command === "string" ? args.command.trim() : null;
    } catch {
      // Arguments that are not JSON name no command: the turn counts as no shell command.
      return null;
    }
  }
  const blocks = [...(action.content ?? "").matchAll(/```[\w+-]*\n([\s\S]*?)(?:```|$)/g)];
  const last = blocks.at(-1)?.[1]?.trim();
  return last ? last.replace(/^bash\s+/, "") : null;
}

const testRunner =
  /\b(pytest|py\.test|unittest|tox|nox|npm (run )?test|yarn test|pnpm (run )?test|npx (jest|vitest|mocha)|jest|vitest|mocha|go test|cargo test|rspec|rake test|phpunit|mvn test|gradle test|dotnet test|ctest|make (test|check))\b/;

/** True when a shell command runs tests (a known runner, or the gate's command). */
export function isTestRun(command: string, testCommand?: string): boolean {
  return (
    testRunner.test(command) ||
    (testCommand !== undefined && testCommand !== "" && command.includes(testCommand))
  );
}
