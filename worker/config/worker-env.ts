/**
 * The worker's own environment variables, beside the shared ones of env.ts; one line each. A pure
 * schema (no worker/ or sandbox/ import), so it lives with the other config schemas.
 */
import { z } from "zod";
import { type Env, hasAppCredentials, parseEnv } from "../../src/config/env.js";
import { ConfigError } from "../../src/errors.js";

const CIDR_LIST = /^\d{1,3}(\.\d{1,3}){3}(\/\d{1,2})?(\s*,\s*\d{1,3}(\.\d{1,3}){3}(\/\d{1,2})?)*$/;

const workerEnvSchema = z.object({
  AGENT_FIX_LOCK_MS: z.coerce.number().int().min(1000).default(60_000), // a dead worker's job moves on this long after its last lock renewal
  AGENT_FIX_STALLED_INTERVAL_MS: z.coerce.number().int().min(100).optional(), // how often workers look for such jobs (default: half the lock)
  AGENT_FIX_REAPER_INTERVAL_MS: z.coerce.number().int().min(1000).default(300_000), // how often orphaned sandboxes are looked for
  AGENT_FIX_WORKER_TAG: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/)
    .optional(), // workers with a tag reap only sandboxes of the same tag
  AGENT_FIX_SANDBOX: z.enum(["docker", "local"]).default("docker"), // local isolates nothing: development only
  AGENT_FIX_SANDBOX_IMAGE: z.string().min(1).optional(), // default: the slim image of sandbox/version.ts; or agent-fix-sandbox-rich:VERSION
  AGENT_FIX_WORKSPACE_TMPFS: z
    .string()
    .regex(/^[1-9]\d*[kmg]?$/i, 'a size such as "2g" or "512m"')
    .optional(), // the former name of AGENT_FIX_WORKSPACE_SIZE (the workspace is always a tmpfs volume now)
  AGENT_FIX_WORKSPACE_SIZE: z
    .string()
    .regex(/^[1-9]\d*[kmg]?$/i, 'a size such as "4g" or "512m"')
    .optional(), // cap of the sandbox's /workspace (default 4g; a tmpfs volume, so the kernel enforces it; the container's memory limit grows by it); wins over AGENT_FIX_WORKSPACE_TMPFS
  AGENT_FIX_WORKSPACE_MAX_FILES: z.coerce.number().int().min(1000).default(1_000_000), // files and directories the host takes in from setup's export or a kept environment; one past it stops the run
  AGENT_FIX_CHANGE_MAX_FILES: z.coerce.number().int().min(1).default(1000), // paths a change may touch; a submit past it is refused and the agent told which directories hold them (the submitted workspace may hold 20 untracked files per such path beside the tracked ones)
  AGENT_FIX_CHANGE_MAX_BYTES: z
    .string()
    .regex(/^[1-9]\d*[kmg]?$/i, 'a size such as "16m"')
    .default("16m"), // the change's size as a binary patch; a submit past it is refused and the agent told
  AGENT_FIX_SETUP_NETWORK: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/)
    .default("agent-fix-setup"), // the Docker network setup runs on (created with inter-container communication off)
  AGENT_FIX_SETUP_NETWORK_ALLOW: z.string().regex(CIDR_LIST, "IPv4 CIDRs separated by commas").optional(), // CIDRs setup may reach although private, e.g. a private registry: 10.20.0.5/32
  AGENT_FIX_SETUP_NETWORK_DENY: z.string().regex(CIDR_LIST, "IPv4 CIDRs separated by commas").optional(), // CIDRs setup may not reach on top of the private ranges: the host's public address when the worker runs in a container
  AGENT_FIX_KEPT_ENVIRONMENTS_SIZE: z
    .string()
    .regex(/^(0|[1-9]\d*[kmg]?)$/i, 'a size such as "20g", or 0 for none')
    .default("20g"), // environments kept after setup (warm start), least recently used removed above this total; 0 keeps none
  AGENT_FIX_STANDBY_SANDBOXES: z.coerce.number().int().min(0).max(16).default(2), // sandboxes of kept environments started ahead (their shells ready, kept files in place), so a repository's next run starts at once; each holds its kept files in memory; 0 keeps none
  AGENT_FIX_STANDBY_IDLE_MINUTES: z.coerce.number().positive().max(240).default(30), // a standby sandbox not taken in this time is removed
  AGENT_FIX_KEPT_ENVIRONMENTS_NAME: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]*$/)
    .default("agent-fix-kept"), // the local image repository they are committed to (docker images agent-fix-kept)
  AGENT_FIX_CA_BUNDLE: z.string().min(1).optional(), // PEM file on the worker host of the CAs setup trusts (a TLS-inspecting proxy's too): npm, pip, git, curl, cargo, go; default the host's /etc/ssl/certs/ca-certificates.crt when present; `none`: the image's own
  AGENT_FIX_MODEL: z.string().min(1).optional(), // overrides the repository's and operator's model: openai:NAME or replay:FILE
  AGENT_FIX_ALLOW_REPLAY_MODELS: z.enum(["true", "false"]).default("false"), // let repo configs name replay:FILE (tests and demo only)
  AGENT_FIX_CONFIG: z.string().min(1).optional(), // a YAML file overlaid on config/default.yaml (tools, loop, model)
  AGENT_FIX_SETUP_SECRETS: z.string().default("{}"), // JSON {"owner/repo": {"NAME": "value"}}: for that repository's setup only
  AGENT_FIX_WORK_DIR: z.string().min(1).optional(), // where host checkouts are made (default: the temp dir)
  AGENT_FIX_WORKER_PORT: z.coerce.number().int().min(0).max(65_535).optional(), // the worker's /healthz and /metrics (worker/ops-server.ts); unset: not served (the image sets 3001)
  AGENT_FIX_WORKER_HOST: z.string().min(1).default("127.0.0.1"), // address that server binds; 0.0.0.0 to be scraped from elsewhere (with AGENT_FIX_METRICS_TOKEN)
  AGENT_FIX_TRAJECTORY_LINK_DAYS: z.coerce.number().positive().max(366).default(7), // posted trajectory links stop working this many days later
});
type WorkerEnv = Env & z.infer<typeof workerEnvSchema> & { APP_ID: number };

const examples: Record<string, string> = {
  AGENT_FIX_LOCK_MS: "AGENT_FIX_LOCK_MS=60000",
  AGENT_FIX_WORKER_TAG: "AGENT_FIX_WORKER_TAG=ci-1",
  AGENT_FIX_SANDBOX: "AGENT_FIX_SANDBOX=docker",
  AGENT_FIX_WORKSPACE_TMPFS: "AGENT_FIX_WORKSPACE_TMPFS=2g",
  AGENT_FIX_WORKSPACE_SIZE: "AGENT_FIX_WORKSPACE_SIZE=4g",
  AGENT_FIX_KEPT_ENVIRONMENTS_SIZE: "AGENT_FIX_KEPT_ENVIRONMENTS_SIZE=20g",
  AGENT_FIX_WORKSPACE_MAX_FILES: "AGENT_FIX_WORKSPACE_MAX_FILES=1000000",
  AGENT_FIX_CHANGE_MAX_FILES: "AGENT_FIX_CHANGE_MAX_FILES=1000",
  AGENT_FIX_CHANGE_MAX_BYTES: "AGENT_FIX_CHANGE_MAX_BYTES=16m",
  AGENT_FIX_SETUP_NETWORK_ALLOW: "AGENT_FIX_SETUP_NETWORK_ALLOW=10.20.0.5/32,10.30.0.0/16",
  AGENT_FIX_SETUP_NETWORK_DENY: "AGENT_FIX_SETUP_NETWORK_DENY=203.0.113.7/32",
  AGENT_FIX_ALLOW_REPLAY_MODELS: "AGENT_FIX_ALLOW_REPLAY_MODELS=false",
  AGENT_FIX_CA_BUNDLE: "AGENT_FIX_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt",
  AGENT_FIX_TRAJECTORY_LINK_DAYS: "AGENT_FIX_TRAJECTORY_LINK_DAYS=7",
  AGENT_FIX_WORKER_PORT: "AGENT_FIX_WORKER_PORT=3001",
  AGENT_FIX_STANDBY_SANDBOXES: "AGENT_FIX_STANDBY_SANDBOXES=2",
  AGENT_FIX_STANDBY_IDLE_MINUTES: "AGENT_FIX_STANDBY_IDLE_MINUTES=30",
};

/** The shared and the worker's variables; a wrong one is a ConfigError naming it, checked at start. */
export function parseWorkerEnv(env: NodeJS.ProcessEnv): WorkerEnv {
  const shared = parseEnv(env);
  if (!hasAppCredentials(shared) || shared.APP_ID === undefined) {
    throw new ConfigError("APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) are needed by the worker", {
      code: "env_invalid",
      hint: "Register the app first (npm start without credentials runs the manifest flow), then set both in .env.",
    });
  }
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = workerEnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? "");
    throw new ConfigError(`Invalid environment: ${issue.path.join(".")}: ${issue.message}`, {
      code: "env_invalid",
      hint: examples[name]
        ? `For example: ${examples[name]}`
        : "See the comments in worker/config/worker-env.ts (workerEnvSchema).",
    });
  }
  parseSetupSecrets(parsed.data.AGENT_FIX_SETUP_SECRETS); // fail at start, not on the first job
  return { ...shared, ...parsed.data, APP_ID: shared.APP_ID };
}

/** AGENT_FIX_SETUP_SECRETS as `owner/repo` -> variables for that repository's setup. */
export function parseSetupSecrets(text: string): Record<string, Record<string, string>> {
  const schema = z.record(z.string(), z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined; // refused just below with the hint, like any other malformed value
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError("environment variable AGENT_FIX_SETUP_SECRETS is not valid", {
      code: "worker_env_invalid",
      hint: 'Use JSON like {"owner/repo": {"NPM_TOKEN": "..."}}: variable names as keys, strings as values.',
    });
  }
  return parsed.data;
}

/** AGENT_FIX_SETUP_NETWORK_ALLOW / _DENY as a list ("a, b" -> ["a", "b"]; unset -> []). */
export function cidrList(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((cidr) => cidr.trim())
    .filter((cidr) => cidr.length > 0);
}

/** The host's bundle of trusted CAs on Debian, Ubuntu and Alpine: the sandbox trusts it by default. */
const HOST_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/** AGENT_FIX_CA_BUNDLE as the file to mount: unset -> the host's bundle when it has one; `none` -> none. */
export function caBundleFile(
  text: string | undefined,
  exists: (file: string) => boolean,
): string | undefined {
  if (text === "none") return undefined;
  if (text !== undefined) return text;
  return exists(HOST_CA_BUNDLE) ? HOST_CA_BUNDLE : undefined;
}
