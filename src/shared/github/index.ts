export { type GitHubApi, githubFailure } from "./api.js";
export { fitComment, githubLength } from "./limits.js";
export { hasWriteAccess } from "./permissions.js";
export { createStatusComment, STATUS_MARKER, type StatusView, updateStatusComment } from "./status.js";
