/**
 * AGENT_FIX_SETUP_SECRETS at start: bound entries go to the runs; entries that name a repository only
 * stop the start, with the ids to add looked up through the app (its JWT finds the installation, an
 * installation token of that one repository reads its id), so the operator copies them in.
 */
import type { Probot } from "probot";
import { githubFailure } from "../../src/shared/github/index.js";
import {
  type LookedUpRepository,
  parseSetupSecrets,
  type SetupSecretBinding,
  unboundSecretsError,
} from "./worker-env.js";

export async function boundSetupSecrets(
  text: string,
  probot: Pick<Probot, "auth">,
): Promise<SetupSecretBinding[]> {
  const { bindings, unbound } = parseSetupSecrets(text);
  if (unbound.length === 0) return bindings;
  const lookedUp: Record<string, LookedUpRepository> = {};
  for (const name of unbound) lookedUp[name] = await lookUp(probot, name);
  throw unboundSecretsError(lookedUp);
}

async function lookUp(probot: Pick<Probot, "auth">, name: string): Promise<LookedUpRepository> {
  const [owner = "", repo = ""] = name.split("/");
  try {
    const app = await probot.auth();
    const { data: installation } = await app.rest.apps.getRepoInstallation({ owner, repo });
    const scoped = await probot.auth(installation.id);
    const { data: repository } = await scoped.rest.repos.get({ owner, repo });
    return { repositoryId: repository.id, installationId: installation.id };
  } catch (error) {
    return { error: githubFailure(error, `looking up ${name}`).message };
  }
}
