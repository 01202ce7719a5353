/**
 * The worker's own environment variables, beside the shared ones of env.ts, each with its description
 * (docs/reference/environment.md is generated from them: npm run docs:reference). A pure
 * schema (no worker/ or sandbox/ import), so it lives with the other config schemas.
 */
import { stringify as toYaml } from "yaml";
import { z } from "zod";
import { type Env, hasAppCredentials, parseEnv } from "../../src/shared/config/env.js";
import { ConfigError } from "../../src/shared/errors.js";

const CIDR_LIST = /^\d{1,3}(\.\d{1,3}){3}(\/\d{1,2})?(\s*,\s*\d{1,3}(\.\d{1,3}){3}(\/\d{1,2})?)*$/;

export const workerEnvSchema = z.object({
  AGENT_FIX_WORKER_TAG: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/)
    .optional()
    .describe(
      "A name for a group of workers sharing a Docker engine: a tagged worker reaps only sandboxes of its own tag.",
    ),
  AGENT_FIX_SANDBOX: z
    .enum(["docker", "local"])
    .default("docker")
    .describe("Where sandboxes run: `docker`, or `local` (isolates nothing: development only)."),
  AGENT_FIX_DOCKER_HOSTS: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The Docker engines the sandboxes run on, comma-separated DOCKER_HOST addresses (unix:///var/run/docker.sock, tcp://HOST:2376 with TLS, ssh://USER@HOST); runs spread over them, a run's sandboxes on one, an engine that stops answering skipped. Default: this host's engine (DOCKER_HOST, an ssh:// one with its host key checked as here). Each engine's socket or TLS key is root on its host (docs/operating.md).",
    ),
  AGENT_FIX_DOCKER_TLS_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      "A directory of ca.pem, cert.pem and key.pem, as Docker's DOCKER_CERT_PATH: the engines' CA and this worker's client certificate, for every tcp:// engine of AGENT_FIX_DOCKER_HOSTS.",
    ),
  AGENT_FIX_DOCKER_SSH_KNOWN_HOSTS: z
    .string()
    .min(1)
    .optional()
    .describe(
      "OpenSSH's known_hosts file holding the host key of every ssh:// engine of AGENT_FIX_DOCKER_HOSTS (or of DOCKER_HOST=ssh://USER@HOST without it), checked at each connection as ssh checks it; default ~/.ssh/known_hosts.",
    ),
  AGENT_FIX_DOCKER_INSECURE_TCP: z
    .enum(["true", "false"])
    .default("false")
    .describe(
      "Allow a tcp:// engine without TLS (anyone who reaches its port is root on its host): only for an engine on loopback or a private link.",
    ),
  AGENT_FIX_SANDBOX_IMAGE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The sandbox image of repositories that name none; default the slim image of sandbox/version.ts (agent-fix-sandbox:VERSION), or agent-fix-sandbox-rich:VERSION.",
    ),
  AGENT_FIX_SANDBOX_RUNTIME: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "a runtime name of the engine, such as runsc")
    .optional()
    .describe(
      "The Docker engine's OCI runtime for the sandboxes: `runsc` runs them under gVisor (a user-space kernel between the agent and the host's); default the engine's own (runc). The engine must have it (`docker info`'s Runtimes; the worker refuses to start otherwise). Setup with network stays on runc (docs/operating.md).",
    ),
  AGENT_FIX_WORKSPACE_SIZE: z
    .string()
    .regex(/^[1-9]\d*[kmg]?$/i, 'a size such as "4g" or "512m"')
    .optional()
    .describe(
      "Cap of the sandbox's /workspace (default 4g; a tmpfs volume, so the kernel enforces it; the container's memory limit grows by it).",
    ),
  AGENT_FIX_WORKSPACE_MAX_FILES: z.coerce
    .number()
    .int()
    .min(1000)
    .default(1_000_000)
    .describe(
      "Files and directories the host takes in from setup's export or a kept environment; one past it stops the run.",
    ),
  AGENT_FIX_CHANGE_MAX_FILES: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(1000)
    .describe(
      "Paths a change may touch (at most 10,000: each goes to git on one command line); a submit past it is refused and the agent told which directories hold them (the submitted workspace may hold 20 untracked files per such path beside the tracked ones).",
    ),
  AGENT_FIX_CHANGE_MAX_BYTES: z
    .string()
    .regex(/^[1-9]\d*[kmg]?$/i, 'a size such as "16m"')
    .default("16m")
    .describe("The change's size as a binary patch; a submit past it is refused and the agent told."),
  AGENT_FIX_SETUP_NETWORK: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/)
    .default("agent-fix-setup")
    .describe("The Docker network setup runs on (created with inter-container communication off)."),
  AGENT_FIX_SETUP_NETWORK_ALLOW: z
    .string()
    .regex(CIDR_LIST, "IPv4 CIDRs separated by commas")
    .optional()
    .describe("CIDRs setup may reach although private, e.g. a private registry: 10.20.0.5/32."),
  AGENT_FIX_SETUP_NETWORK_DENY: z
    .string()
    .regex(CIDR_LIST, "IPv4 CIDRs separated by commas")
    .optional()
    .describe(
      "CIDRs setup may not reach on top of the private ranges: the host's public address when the worker runs in a container.",
    ),
  AGENT_FIX_KEPT_ENVIRONMENTS_NAME: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]*$/)
    .default("agent-fix-kept")
    .describe(
      "The local image repository kept environments are committed to (docker images agent-fix-kept); how much is kept is `worker.keptEnvironments.size` of the operator's YAML.",
    ),
  AGENT_FIX_CA_BUNDLE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "PEM file on the worker host of the CAs setup trusts (a TLS-inspecting proxy's too): npm, pip, git, curl, cargo, go; default the host's /etc/ssl/certs/ca-certificates.crt when present; `none`: the image's own.",
    ),
  AGENT_FIX_MODEL: z
    .string()
    .min(1)
    .optional()
    .describe("Overrides the repository's and operator's model: openai:NAME or replay:FILE."),
  AGENT_FIX_ALLOW_REPLAY_MODELS: z
    .enum(["true", "false"])
    .default("false")
    .describe("Let repo configs name replay:FILE (tests and demo only)."),
  AGENT_FIX_CONFIG: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The operator's YAML: a file overlaid on config/default.yaml (its keys: docs/reference/configuration.md).",
    ),
  AGENT_FIX_SETUP_SECRETS: z
    .string()
    .default("{}")
    .describe(
      'JSON {"owner/repo": {"repositoryId": N, "installationId": N, "secrets": {"NAME": "value"}}}: for that repository\'s setup only, bound by id.',
    ),
  AGENT_FIX_WORK_DIR: z
    .string()
    .min(1)
    .optional()
    .describe("Where host checkouts are made (default: the temp dir)."),
  AGENT_FIX_WORKER_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65_535)
    .optional()
    .describe(
      "The worker's /healthz and /metrics (worker/ops-server.ts); unset: not served (the image sets 3001).",
    ),
  AGENT_FIX_WORKER_HOST: z
    .string()
    .min(1)
    .default("127.0.0.1")
    .describe(
      "Address that server binds; 0.0.0.0 to be scraped from elsewhere (with AGENT_FIX_METRICS_TOKEN).",
    ),
  AGENT_FIX_TRAJECTORY_LINK_DAYS: z.coerce
    .number()
    .positive()
    .max(366)
    .default(7)
    .describe("Posted trajectory links stop working this many days later."),
});
type WorkerEnv = Env & z.infer<typeof workerEnvSchema> & { APP_ID: number };

const examples: Record<string, string> = {
  AGENT_FIX_WORKER_TAG: "AGENT_FIX_WORKER_TAG=ci-1",
  AGENT_FIX_SANDBOX: "AGENT_FIX_SANDBOX=docker",
  AGENT_FIX_DOCKER_HOSTS: "AGENT_FIX_DOCKER_HOSTS=tcp://10.0.0.5:2376,ssh://agent@10.0.0.6",
  AGENT_FIX_DOCKER_TLS_DIR: "AGENT_FIX_DOCKER_TLS_DIR=/etc/agent-fix/docker-tls",
  AGENT_FIX_WORKSPACE_SIZE: "AGENT_FIX_WORKSPACE_SIZE=4g",
  AGENT_FIX_WORKSPACE_MAX_FILES: "AGENT_FIX_WORKSPACE_MAX_FILES=1000000",
  AGENT_FIX_CHANGE_MAX_FILES: "AGENT_FIX_CHANGE_MAX_FILES=1000",
  AGENT_FIX_CHANGE_MAX_BYTES: "AGENT_FIX_CHANGE_MAX_BYTES=16m",
  AGENT_FIX_SETUP_NETWORK_ALLOW: "AGENT_FIX_SETUP_NETWORK_ALLOW=10.20.0.5/32,10.30.0.0/16",
  AGENT_FIX_SETUP_NETWORK_DENY: "AGENT_FIX_SETUP_NETWORK_DENY=203.0.113.7/32",
  AGENT_FIX_ALLOW_REPLAY_MODELS: "AGENT_FIX_ALLOW_REPLAY_MODELS=false",
  AGENT_FIX_CA_BUNDLE: "AGENT_FIX_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt",
  AGENT_FIX_TRAJECTORY_LINK_DAYS: "AGENT_FIX_TRAJECTORY_LINK_DAYS=7",
  AGENT_FIX_WORKER_PORT: "AGENT_FIX_WORKER_PORT=3001",
};

/**
 * Tuning that was an environment variable and is a key of the operator's YAML now (the `worker:`
 * section of config/default.yaml, overlaid by the file AGENT_FIX_CONFIG names): its path there, and
 * whether the value is a number. Environment is for deployment (where things are); this is how
 * often and how much.
 */
export const movedToOperatorConfig: Record<string, { key: readonly string[]; number: boolean }> = {
  AGENT_FIX_LOCK_MS: { key: ["worker", "lockMs"], number: true },
  AGENT_FIX_STALLED_INTERVAL_MS: { key: ["worker", "stalledIntervalMs"], number: true },
  AGENT_FIX_REAPER_INTERVAL_MS: { key: ["worker", "reaperIntervalMs"], number: true },
  AGENT_FIX_KEPT_ENVIRONMENTS_SIZE: { key: ["worker", "keptEnvironments", "size"], number: false },
  AGENT_FIX_STANDBY_SANDBOXES: { key: ["worker", "standby", "sandboxes"], number: true },
  AGENT_FIX_STANDBY_IDLE_MINUTES: { key: ["worker", "standby", "idleMinutes"], number: true },
};

/** Former names of variables, and the current one to set instead. */
export const renamedVariables: Record<string, string> = {
  AGENT_FIX_WORKSPACE_TMPFS: "AGENT_FIX_WORKSPACE_SIZE",
};

/**
 * A variable the worker no longer reads stops the start, naming what to set instead: ignored, an
 * operator upgrading would lose the setting without a word.
 */
function refuseRetiredVariables(env: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === "") continue;
    const current = renamedVariables[name];
    if (current) {
      throw new ConfigError(`${name} is no longer read: it is ${current} now`, {
        code: "env_invalid",
        hint: `Rename it: ${current}=${value}`,
      });
    }
    const moved = movedToOperatorConfig[name];
    if (!moved) continue;
    const numeric = Number(value);
    const setting = moved.key.reduceRight<unknown>(
      (inner, key) => ({ [key]: inner }),
      moved.number || value === "0" ? (Number.isNaN(numeric) ? value : numeric) : value,
    );
    throw new ConfigError(
      `${name} is no longer read: it is the key ${moved.key.join(".")} of the operator's YAML now`,
      {
        code: "env_invalid",
        hint: `Remove ${name} and set it in the YAML file AGENT_FIX_CONFIG names (config/default.yaml has the default):\n${toYaml(setting).trimEnd()}`,
      },
    );
  }
}

/** The shared and the worker's variables; a wrong one is a ConfigError naming it, checked at start. */
export function parseWorkerEnv(env: NodeJS.ProcessEnv): WorkerEnv {
  refuseRetiredVariables(env);
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
        : "See docs/reference/environment.md for every variable and its form.",
    });
  }
  parseSetupSecrets(parsed.data.AGENT_FIX_SETUP_SECRETS); // fail at start, not on the first job
  return { ...shared, ...parsed.data, APP_ID: shared.APP_ID };
}

/**
 * One entry of AGENT_FIX_SETUP_SECRETS: variables for the setup of one repository, bound to it by its
 * immutable id and its installation. The name (the entry's key) is for people reading the config: a
 * repository deleted and its name re-created by another account, or a name handed over after a rename,
 * has another id; a repository transferred to another account is in another installation. Neither gets
 * the secrets.
 */
export interface SetupSecretBinding {
  /** owner/repo as the operator wrote it. */
  name: string;
  repositoryId: number;
  installationId: number;
  secrets: Record<string, string>;
}

interface SetupSecretsConfig {
  bindings: SetupSecretBinding[];
  /** Entries in the former form (`"owner/repo": {"NAME": "value"}`): bound by name alone, refused at start. */
  unbound: string[];
}

const VARIABLE = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);
const boundEntry = z
  .object({
    repositoryId: z.number().int().positive(),
    installationId: z.number().int().positive(),
    secrets: z.record(VARIABLE, z.string()),
  })
  .strict();
const nameOnlyEntry = z.record(VARIABLE, z.string());
const SECRETS_EXAMPLE =
  '{"owner/repo": {"repositoryId": 123456, "installationId": 789, "secrets": {"NPM_TOKEN": "..."}}}';

/** AGENT_FIX_SETUP_SECRETS parsed: the bound entries, and the names of entries that name a repository only. */
export function parseSetupSecrets(text: string): SetupSecretsConfig {
  // An entry naming any field of the bound form is held to it whole, never read as variables.
  const entry = z
    .custom<object>((value) => typeof value === "object" && value !== null)
    .pipe(
      z.union([
        boundEntry,
        nameOnlyEntry.refine(
          (value) => !["repositoryId", "installationId", "secrets"].some((k) => k in value),
        ),
      ]),
    );
  const schema = z.record(z.string().regex(/^[^/\s]+\/[^/\s]+$/), entry);
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
      hint: `Use JSON like ${SECRETS_EXAMPLE}: one entry per repository (owner/repo, for people), its id and installation (what binds the secrets), variable names as keys, strings as values.`,
    });
  }
  const bindings: SetupSecretBinding[] = [];
  const unbound: string[] = [];
  for (const [name, entry] of Object.entries(parsed.data)) {
    const bound = boundEntry.safeParse(entry).data; // the union's first branch, when it was that one
    if (bound) {
      const twin = bindings.find(
        (b) => b.repositoryId === bound.repositoryId && b.installationId === bound.installationId,
      );
      if (twin) {
        throw new ConfigError(
          `AGENT_FIX_SETUP_SECRETS binds ${twin.name} and ${name} to the same repository (id ${bound.repositoryId}, installation ${bound.installationId})`,
          { code: "worker_env_invalid", hint: "Keep one entry per repository, with all of its variables." },
        );
      }
      bindings.push({ name, ...bound });
    } else unbound.push(name);
  }
  return { bindings, unbound };
}

/** The ids of a repository the worker looked up for the operator, or why it could not. */
export type LookedUpRepository = { repositoryId: number; installationId: number } | { error: string };

/**
 * The start-up refusal of entries bound by name alone: whoever holds the name next would get the
 * secrets. Says, per entry, the ids to add (as the worker found them through the app) or how to find them.
 */
export function unboundSecretsError(lookedUp: Record<string, LookedUpRepository>): ConfigError {
  const lines = Object.entries(lookedUp).map(([name, found]) =>
    "error" in found
      ? `"${name}": not found through the app (${found.error}); its ids: gh api repos/${name} --jq .id, and the installation's number in the URL of the app's settings on the owner's account`
      : `"${name}": {"repositoryId": ${found.repositoryId}, "installationId": ${found.installationId}, "secrets": {...}}`,
  );
  return new ConfigError(
    `AGENT_FIX_SETUP_SECRETS names ${Object.keys(lookedUp).join(", ")} by name only; a name can pass to another repository (deleted and re-created, renamed, transferred), so setup secrets are bound to the repository's id and installation`,
    {
      code: "worker_env_invalid",
      hint: `Write each entry with its ids, the variables under "secrets":\n${lines.join("\n")}`,
    },
  );
}

/**
 * The setup secrets of the repository with this id in this installation; none for any other. `warn`
 * is told when an entry's id matches but not its installation (the repository was transferred, or the
 * app reinstalled: the operator re-binds it) or its name is not the repository's current one.
 */
export function setupSecretsFor(
  bindings: readonly SetupSecretBinding[],
  repository: { id: number; installationId: number },
  fullName: string,
  warn: (message: string) => void,
): Record<string, string> {
  const sameId = bindings.filter((b) => b.repositoryId === repository.id);
  const bound = sameId.find((b) => b.installationId === repository.installationId);
  if (!bound) {
    for (const other of sameId) {
      warn(
        `setup secrets of ${other.name} not given: they are bound to installation ${other.installationId}, and repository ${repository.id} (${fullName}) is now in installation ${repository.installationId}; set its installationId to ${repository.installationId} if it is still the operator's to trust`,
      );
    }
    return {};
  }
  if (bound.name.toLowerCase() !== fullName.toLowerCase()) {
    warn(
      `setup secrets of ${bound.name} given to repository ${repository.id}, now named ${fullName}: rename the entry in AGENT_FIX_SETUP_SECRETS for readability`,
    );
  }
  return bound.secrets;
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
