/** Installation events are only logged: the app needs no per-installation state. */
import type { Context } from "probot";

export async function onInstallation(
  context: Context<"installation" | "installation_repositories">,
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
}
