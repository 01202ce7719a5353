/**
 * Who may command the app: users with write access to the repository (write, maintain or admin); who
 * may ask it for help or a run's status: anyone who may read it.
 */
import { type GitHubApi, httpStatus, type RepoRef } from "./api.js";

const WRITE_ROLES = new Set(["admin", "maintain", "write"]);

export async function hasWriteAccess(api: GitHubApi, repo: RepoRef, login: string): Promise<boolean> {
  try {
    const { data } = await api.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: login });
    return WRITE_ROLES.has(data.permission) || WRITE_ROLES.has(data.role_name ?? "");
  } catch (error) {
    // 404: not a collaborator (or unknown user): no access.
    if (httpStatus(error) === 404) return false;
    throw error;
  }
}

const READ_ROLES = new Set([...WRITE_ROLES, "triage", "read"]);

export async function hasReadAccess(api: GitHubApi, repo: RepoRef, login: string): Promise<boolean> {
  try {
    const { data } = await api.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: login });
    return READ_ROLES.has(data.permission) || READ_ROLES.has(data.role_name ?? "");
  } catch (error) {
    if (httpStatus(error) === 404) return false;
    throw error;
  }
}
