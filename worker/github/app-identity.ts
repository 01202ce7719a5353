import type { Probot, ProbotOctokit } from "probot";
import { ConfigError } from "../../src/shared/errors.js";
import { createWorkerLogger, type Logger } from "../log.js";
import type { CommitIdentity } from "../run/push/commit.js";

/**
 * `SLUG[bot]` with the noreply address GitHub links to the app's bot account:
 * `<bot user id>+SLUG[bot]@users.noreply.<host>` (the GHE host's on GitHub Enterprise Server).
 */
export async function appIdentity(
  probot: Pick<Probot, "auth">,
  settings: { APP_ID: number; GHE_HOST?: string | undefined },
  logger: Logger = createWorkerLogger(),
): Promise<CommitIdentity> {
  const app = await probot.auth();
  const { data } = await app.rest.apps.getAuthenticated().catch((error: unknown) => {
    throw new ConfigError(`Cannot authenticate as the GitHub App ${settings.APP_ID}: ${String(error)}`, {
      code: "app_auth_failed",
      hint: "Check APP_ID, PRIVATE_KEY and GHE_HOST.",
    });
  });
  const slug = data?.slug ?? "agent-fix";
  const login = `${slug}[bot]`;
  const id = await botUserId(probot, app, login);
  const host = settings.GHE_HOST
    ? `users.noreply.${settings.GHE_HOST.replace(/:\d+$/, "")}`
    : "users.noreply.github.com";
  if (id === null) logger.warn(`could not look up the id of ${login}; commits will not link to it`);
  return { name: login, email: id === null ? `${login}@${host}` : `${id}+${login}@${host}` };
}

/**
 * The bot user's id. `GET /users/{username}` is not an app (JWT) endpoint: the app's client refuses
 * it before sending. It is public, so it is asked without credentials first; where the API requires
 * them (GitHub Enterprise Server in private mode), as one of the app's installations.
 */
async function botUserId(
  probot: Pick<Probot, "auth">,
  app: ProbotOctokit,
  login: string,
): Promise<number | null> {
  // Every failure here means "id unknown" (null): the caller logs it and commits use the bare address.
  const baseUrl = app.request.endpoint.DEFAULTS.baseUrl;
  const anonymous = await fetch(`${baseUrl}/users/${encodeURIComponent(login)}`, {
    headers: { accept: "application/vnd.github+json" },
  }).catch(() => null);
  if (anonymous?.ok) {
    const user = (await anonymous.json().catch(() => null)) as { id?: unknown } | null;
    if (typeof user?.id === "number") return user.id;
  }
  try {
    const { data: installations } = await app.rest.apps.listInstallations({ per_page: 1 });
    const first = installations[0];
    if (!first) return null;
    const installation = await probot.auth(first.id);
    const { data: user } = await installation.rest.users.getByUsername({ username: login });
    return user.id;
  } catch {
    return null;
  }
}
