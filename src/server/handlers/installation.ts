/**
 * Installation events. Uninstalling the app (or suspending it) cancels the installation's queued and
 * running runs, and removing repositories from it cancels theirs: the app can no longer act there,
 * and a run left alone would fail on its first token. The status comments of such runs cannot be
 * edited any more (the installation's tokens are refused), so they are left as they are.
 */
import type { Context } from "probot";
import { cancelInstallationRuns } from "../installation-runs.js";
import type { HandlerDeps } from "./deps.js";

export async function onInstallation(
  context: Context<"installation" | "installation_repositories">,
  deps: Pick<HandlerDeps, "queue">,
): Promise<void> {
  const { payload } = context;
  const repositories =
    "repositories_added" in payload
      ? {
          added: payload.repositories_added.map((r) => r.full_name),
          removed: payload.repositories_removed.map((r) => r.full_name),
        }
      : { repositories: payload.repositories?.map((r) => r.full_name) };
  context.log.info(
    {
      action: payload.action,
      account:
        payload.installation.account && "login" in payload.installation.account
          ? payload.installation.account.login
          : undefined,
      ...repositories,
    },
    "installation event",
  );
  const by = payload.sender.login;
  const installationId = payload.installation.id;
  let cancelled: string[] = [];
  if (payload.action === "deleted" || payload.action === "suspend") {
    const reason = payload.action === "deleted" ? "app uninstalled" : "installation suspended";
    cancelled = await cancelInstallationRuns(deps.queue, { installationId }, by, reason);
  } else if (payload.action === "removed" && "repositories_removed" in payload) {
    const repoIds = payload.repositories_removed.map((r) => r.id);
    cancelled = await cancelInstallationRuns(
      deps.queue,
      { installationId, repoIds },
      by,
      "repository removed from the app",
    );
  }
  if (cancelled.length > 0) context.log.info({ installationId, cancelled }, "runs cancelled");
}
