/**
 * How GitHub's git server refuses what it does not accept, for the git stand-in: pushes declined by a
 * ruleset (GH013), branch protection (GH006), a workflow file changed by an app without the
 * `workflows` permission, or a pre-receive hook; and a freshly minted token refused for its first
 * uses (the token has not reached every server yet). The texts are GitHub's, as git prints them:
 * `remote: error: GH013: ...` and `! [remote rejected] HEAD -> BRANCH (REASON)`. Also pushes that fail
 * without a rule: a server error (5xx) during an outage, or a push that hangs (see PushFaults).
 */
import { writeFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";

export type PushRefusal =
  /** A repository ruleset; `rules` are the violated rules' descriptions. */
  | { kind: "ruleset"; rules: readonly string[] }
  /** Classic branch protection. */
  | { kind: "protected_branch"; rules: readonly string[] }
  /** Any change under .github/workflows/, pushed with an app token lacking `workflows: write`. */
  | { kind: "workflows" }
  /** A GitHub Enterprise Server pre-receive hook printing `message`. */
  | { kind: "pre_receive"; message: string };

export interface PushRule {
  /** Branches the rule applies to, as a shell `case` pattern (e.g. `agent-fix/*`). */
  branches: string;
  refusal: PushRefusal;
}

/** What git's `! [remote rejected]` line says in parentheses, per refusal. */
const REASON_MARK = "stand-in-reason";

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function refusalScript(refusal: PushRefusal, rulesUrl: string): string {
  const say = (line: string) => `    echo ${shellQuote(line)} >&2`;
  switch (refusal.kind) {
    case "ruleset":
      return [
        `    echo "error: GH013: Repository rule violations found for $ref." >&2`,
        `    echo "Review all repository rules at ${rulesUrl}?ref=$(echo "$ref" | sed 's|/|%2F|g')" >&2`,
        ...refusal.rules.flatMap((rule) => [say(""), say(`- ${rule}`)]),
        say(""),
        `    echo "${REASON_MARK} $ref push declined due to repository rule violations" >&2`,
        "    refused=1",
      ].join("\n");
    case "protected_branch":
      return [
        `    echo "error: GH006: Protected branch update failed for $ref." >&2`,
        ...refusal.rules.map((rule) => say(`error: ${rule}`)),
        `    echo "${REASON_MARK} $ref protected branch hook declined" >&2`,
        "    refused=1",
      ].join("\n");
    case "workflows":
      return [
        `    workflow=$(git rev-list "$new" --not --all | git diff-tree --stdin --root -r --name-only --no-commit-id | grep '^\\.github/workflows/' | head -n 1)`,
        `    if [ -n "$workflow" ]; then`,
        `      echo "${REASON_MARK} $ref refusing to allow a GitHub App to create or update workflow \\\`$workflow\\\` without \\\`workflows\\\` permission" >&2`,
        "      refused=1",
        "    fi",
      ].join("\n");
    case "pre_receive":
      return [...refusal.message.split("\n").map(say), "    refused=1"].join("\n");
  }
}

/** Writes the bare repository's pre-receive hook enforcing `rules` (replacing earlier ones). */
export async function installPushRules(repoDir: string, rules: PushRule[], rulesUrl: string): Promise<void> {
  const cases = rules
    .map(
      (rule) =>
        `  case "\${ref#refs/heads/}" in\n  ${rule.branches})\n${refusalScript(rule.refusal, rulesUrl)}\n    ;;\n  esac`,
    )
    .join("\n");
  const script = `#!/bin/sh\nrefused=0\nwhile read old new ref; do\n${cases || "  :"}\ndone\nexit $refused\n`;
  await writeFile(join(repoDir, "hooks", "pre-receive"), script, { mode: 0o755 });
}

interface Packet {
  flush: boolean;
  payload: Buffer;
}

function parsePackets(data: Buffer): Packet[] | null {
  const packets: Packet[] = [];
  for (let i = 0; i < data.length; ) {
    const length = Number.parseInt(data.subarray(i, i + 4).toString("latin1"), 16);
    if (Number.isNaN(length) || (length > 0 && length < 4) || i + Math.max(length, 4) > data.length)
      return null;
    packets.push({ flush: length === 0, payload: data.subarray(i + 4, i + Math.max(length, 4)) });
    i += Math.max(length, 4);
  }
  return packets;
}

function packet(payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, "0")), payload]);
}

/**
 * git's receive-pack can only say "pre-receive hook declined"; GitHub's server says why. Rewrites a
 * receive-pack answer (side-band-64k) so each refused ref carries the reason its hook gave.
 */
export function withGitHubReasons(answer: Buffer): Buffer {
  const packets = parsePackets(answer);
  if (!packets) return answer;
  let progress = "";
  let report = Buffer.alloc(0);
  for (const p of packets) {
    if (p.flush) continue;
    if (p.payload[0] === 2) progress += p.payload.subarray(1).toString("utf8");
    else if (p.payload[0] === 1) report = Buffer.concat([report, p.payload.subarray(1)]);
    else return answer;
  }
  const reasons = new Map<string, string>();
  const messages = progress.split("\n").filter((line) => {
    if (!line.startsWith(`${REASON_MARK} `)) return true;
    const [ref = "", ...reason] = line.slice(REASON_MARK.length + 1).split(" ");
    reasons.set(ref, reason.join(" "));
    return false;
  });
  if (reasons.size === 0) return answer;
  const inner = parsePackets(report) ?? [];
  const rewritten = inner.map((p) => {
    if (p.flush) return Buffer.from("0000");
    const line = p.payload.toString("utf8");
    const match = /^ng (\S+) pre-receive hook declined\n?$/.exec(line);
    const reason = match ? reasons.get(match[1] ?? "") : undefined;
    return packet(reason ? Buffer.from(`ng ${match?.[1]} ${reason}\n`) : p.payload);
  });
  return Buffer.concat([
    packet(Buffer.concat([Buffer.from([2]), Buffer.from(messages.join("\n"))])),
    packet(Buffer.concat([Buffer.from([1]), ...rewritten])),
    Buffer.from("0000"),
  ]);
}

/** GitHub's git answer to a token it does not accept (yet). */
export const REFUSED_TOKEN_ANSWER = {
  status: 401,
  headers: { "WWW-Authenticate": 'Basic realm="GitHub"', "Content-Type": "text/plain" },
  body: "Invalid username or token. Password authentication is not supported for Git operations.\n",
};

/** Refuses each token for its first `uses` git requests, as GitHub does while a new token propagates. */
export class FreshTokenRefusal {
  private readonly seen = new Map<string, number>();
  /** Requests refused so far. */
  refused = 0;
  constructor(public uses = 0) {}

  /** Whether this request with `token` is refused (counts the use). */
  refuses(token: string): boolean {
    const used = this.seen.get(token) ?? 0;
    this.seen.set(token, used + 1);
    if (used >= this.uses) return false;
    this.refused++;
    return true;
  }
}

/** What GitHub's git server answers a push it fails on (an outage): a status and a plain-text body. */
const SERVER_ERROR_TEXT: Record<number, string> = {
  500: "Internal Server Error\n",
  502: "Bad Gateway\n",
  503: "Service Unavailable\n",
};

interface HeldPushes {
  arrived: () => void;
  requests: ServerResponse[];
}

/**
 * Pushes that do not get through for reasons other than a rule: a server error answered to the next
 * pushes of a repository (`failNext`), or pushes held without an answer (`hold`) so a test can stop a
 * worker while it is pushing. Only the upload of the push (POST git-receive-pack) is affected.
 */
export class PushFaults {
  private readonly failures = new Map<string, { status: number; left: number }>();
  private readonly held = new Map<string, HeldPushes>();
  /** Pushes answered with a server error so far. */
  failed = 0;

  /** The next `times` pushes to OWNER/REPO are answered `status` (500, 502 or 503). */
  failNext(owner: string, repo: string, times: number, status: 500 | 502 | 503 = 500): void {
    this.failures.set(`${owner}/${repo}`, { status, left: times });
  }

  /**
   * Pushes to OWNER/REPO get no answer until `release`, which answers the held ones 503 (an answer, so
   * a client left behind does not send them again) and lets later ones through. `arrived` resolves
   * when the first held push comes in.
   */
  hold(owner: string, repo: string): { arrived: Promise<void>; release: () => void } {
    const key = `${owner}/${repo}`;
    let arrived = () => {};
    const promise = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    this.held.set(key, { arrived, requests: [] });
    return {
      arrived: promise,
      release: () => {
        for (const res of this.held.get(key)?.requests ?? []) {
          if (!res.writableEnded)
            res.writeHead(503, { "Content-Type": "text/plain" }).end(SERVER_ERROR_TEXT[503]);
        }
        this.held.delete(key);
      },
    };
  }

  /** Answers (or holds) a push to OWNER/REPO when a fault applies; false to let it through. */
  intercept(owner: string, repo: string, req: IncomingMessage, res: ServerResponse): boolean {
    const key = `${owner}/${repo}`;
    const held = this.held.get(key);
    if (held) {
      held.requests.push(res);
      held.arrived();
      return true;
    }
    const failure = this.failures.get(key);
    if (!failure || failure.left <= 0) return false;
    failure.left--;
    this.failed++;
    // The pack is read first, as a server that fails after receiving it does.
    req.resume();
    req.on("end", () => {
      res
        .writeHead(failure.status, { "Content-Type": "text/plain" })
        .end(SERVER_ERROR_TEXT[failure.status] ?? "Server Error\n");
    });
    return true;
  }
}
